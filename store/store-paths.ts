/** Where a data directory keeps its LMDB environment, and whether one is there. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const DB_DIR_NAME = 'db';

export function storePath(dataDir: string): string {
  return join(dataDir, DB_DIR_NAME);
}

export function storeExists(path: string): boolean {
  return existsSync(join(path, 'data.mdb'));
}
