/**
 * The node's devp2p identity: a secp256k1 private key in `<dataDir>/execution-p2p-secret`,
 * 64 hex digits and a newline, readable by its owner only (0600). Created on first use and kept
 * across restarts so the node keeps its node id (enode) and peers can find it again.
 *
 * An existing file that group or others may read, or that does not hold a valid key, is refused
 * rather than repaired: either may mean the key leaked or the path points somewhere unexpected.
 * Never log the key or the file content.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';

export const P2P_SECRET_FILE_NAME = 'execution-p2p-secret';

export class P2pSecretFileError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`p2p secret file ${path} ${problem}`);
    this.name = 'P2pSecretFileError';
    this.path = path;
  }
}

/** Returns the node's p2p private key (32 bytes), creating the file on first call. */
export function ensureP2pSecret(dataDir: string): Uint8Array {
  const path = join(dataDir, P2P_SECRET_FILE_NAME);
  const existing = readP2pSecret(path);
  if (existing) return existing;
  mkdirSync(dataDir, { recursive: true });
  const secretKey = secp256k1.utils.randomSecretKey();
  if (createWithContent(path, `${Buffer.from(secretKey).toString('hex')}\n`)) return secretKey;
  // Another process created it between our read and our write: use theirs.
  const created = readP2pSecret(path);
  if (!created) throw new P2pSecretFileError(path, 'vanished while it was being created; retry');
  return created;
}

function readP2pSecret(path: string): Uint8Array | undefined {
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new P2pSecretFileError(path, 'is not a regular file; move it aside');
    mode = stat.mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if ((mode & 0o077) !== 0) {
    throw new P2pSecretFileError(
      path,
      `is readable or writable by group or others (mode ${(mode & 0o777).toString(8).padStart(3, '0')}); ` +
        'treat the key as exposed: delete the file to get a new node identity, or chmod 600 it if you are sure it did not leak',
    );
  }
  const text = readFileSync(path, 'utf8');
  const match = /^(?:0x)?([0-9a-fA-F]{64})\s*$/.exec(text);
  const secretKey = match?.[1] ? Uint8Array.from(Buffer.from(match[1], 'hex')) : undefined;
  if (!secretKey || !secp256k1.utils.isValidSecretKey(secretKey)) {
    throw new P2pSecretFileError(path, 'does not hold a valid secp256k1 private key (64 hex digits); move it aside to get a new node identity');
  }
  return secretKey;
}

/**
 * Writes a private staging file (mode 0600, exclusive) and hard-links it into place, so the
 * secret file appears with its full content or not at all. Returns false if it already exists.
 */
function createWithContent(path: string, content: string): boolean {
  const staged = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(staged, 'wx', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(staged, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(staged);
  }
}
