// Builds the HTTP guard addon (native/http-guard) through ../gyp-build.mjs and checks its request-head checker on a
// few heads. Without it the listeners do not answer the requests uWebSockets.js cannot parse (api/http-guard.ts).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '../gyp-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const addonPath = join(here, 'build', 'Release', 'http_guard.node');

function selfCheck() {
  const addon = createRequire(import.meta.url)(addonPath);
  const heads = [
    ['GET /v1/status HTTP/1.1\r\nHost: a\r\n\r\n', 'ok'],
    ['GET /v1/status HTTP/1.0\r\n\r\n', 'version'],
    ['GET /v1/status HTTP/1.1\r\n\r\n', 'no_host'],
    ['FOO / HTTP/1.1\r\nHost: a\r\n\r\n', 'method'],
  ];
  for (const [head, expected] of heads) {
    const { reason } = addon.check([new TextEncoder().encode(head)]);
    if (reason !== expected) throw new Error(`${JSON.stringify(head)} checked as ${reason}, expected ${expected}`);
  }
  return `request-head checker passes ${heads.length} heads`;
}

buildAddon({
  name: 'native/http-guard',
  dir: here,
  addonPath,
  without: 'the listeners will not answer requests the web server cannot parse (README, Behind a reverse proxy)',
  check: selfCheck,
});
