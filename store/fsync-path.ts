/** Flushes a file or a directory (its entries) to disk: a copied store or a rename survives power loss. */
import { closeSync, fsyncSync, openSync } from 'node:fs';

export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
