import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: the nearest folder above this file whose package.json names this project, else the working directory. */
function findProjectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && readFileSync(manifest, 'utf8').includes('"chain-data-node"')) return dir;
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

export const PROJECT_ROOT = findProjectRoot();
/** Third-party fixtures live beside the project, never inside it (see ../shared/fixtures/SOURCES.md). */
export const FIXTURES = resolve(PROJECT_ROOT, '../shared/fixtures');
