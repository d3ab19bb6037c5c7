// Builds the map-release addon (native/map-release) through ../gyp-build.mjs and checks it on a scratch LMDB store:
// after reading every record through the memory map, release() must give back file-backed residency, and every record
// must read back unchanged afterwards. Without it the node keeps the store's map pages it has read resident
// (store/map-release.ts).
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '../gyp-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const addonPath = join(here, 'build', 'Release', 'map_release.node');

function selfCheck() {
  const require = createRequire(import.meta.url);
  const addon = require(addonPath);
  const { open } = require('lmdb');
  const dir = mkdtempSync(join(tmpdir(), 'cdn-map-release-check-'));
  try {
    const db = open({ path: dir, mapSize: 1024 ** 3, keyEncoding: 'uint32', encoding: 'binary', cache: false, compression: false });
    const value = (i) => Buffer.alloc(4000, i & 0xff);
    db.transactionSync(() => { for (let i = 0; i < 8192; i++) db.putSync(i, value(i)); });
    const readAll = () => { for (let i = 0; i < 8192; i++) if (!value(i).equals(db.getBinary(i))) throw new Error(`record ${i} differs`); };
    readAll();
    const result = addon.release(realpathSync(join(dir, 'data.mdb')));
    if (result.mappings < 1) throw new Error('no mapping of the scratch store was found in /proc/self/maps');
    const released = result.fileResidentBeforeBytes - result.fileResidentAfterBytes;
    if (!(released >= 16 * 1024 ** 2)) throw new Error(`gave back ${released} bytes after reading 32 MB through the map`);
    readAll();
    db.close();
    return `gave back ${Math.round(released / 1024 ** 2)} MiB of a scratch store's map, records unchanged`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

buildAddon({
  name: 'native/map-release',
  dir: here,
  addonPath,
  without: 'the node keeps the store\'s memory-map pages it has read resident (README, Memory)',
  check: selfCheck,
});
