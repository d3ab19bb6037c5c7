/**
 * The bundled build of a dist/ module, when the build made one (build/bundle.mjs): dist/bundle/<its path under
 * dist/, `/` written `~`>.js. A bundle older than the module it was built from (dist/ compiled again without the
 * bundle step) is not used, so a thread never runs code older than dist/.
 */
import { existsSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const DIST = fileURLToPath(new URL('../', import.meta.url));
const BUNDLE_DIR = join(DIST, 'bundle');
const found = new Map<string, string | null>();

/** The bundle of `module` (an absolute path or file URL under dist/), or null where there is none. */
export function bundledModule(module: string): string | null {
  const path = module.startsWith('file:') ? fileURLToPath(module) : module;
  let bundle = found.get(path);
  if (bundle === undefined) {
    bundle = locate(path);
    found.set(path, bundle);
  }
  return bundle;
}

function locate(path: string): string | null {
  const inDist = relative(DIST, path);
  if (inDist.startsWith('..') || inDist.startsWith(`bundle${sep}`) || !inDist.endsWith('.js')) return null;
  const bundle = join(BUNDLE_DIR, `${inDist.slice(0, -3).split(sep).join('~')}.js`);
  if (!existsSync(bundle) || !existsSync(path)) return null;
  return statSync(bundle).mtimeMs >= statSync(path).mtimeMs ? bundle : null;
}
