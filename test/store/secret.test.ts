import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { ensureP2pSecret, P2P_SECRET_FILE_NAME, P2pSecretFileError } from '../../store/secret.js';
import { tempDir } from './helpers/temp-dir.js';

test('the p2p secret is created once as a valid secp256k1 key in a 0600 file', (t) => {
  const dataDir = tempDir(t);
  const key = ensureP2pSecret(dataDir);
  const path = join(dataDir, P2P_SECRET_FILE_NAME);
  assert.equal(key.length, 32);
  assert.ok(secp256k1.utils.isValidSecretKey(key));
  assert.equal(statSync(path).mode & 0o777, 0o600);
  assert.equal(readFileSync(path, 'utf8'), `${Buffer.from(key).toString('hex')}\n`);
  assert.deepEqual(readdirSync(dataDir), [P2P_SECRET_FILE_NAME], 'no staging file is left behind');
});

test('the same key is returned across restarts', (t) => {
  const dataDir = tempDir(t);
  const first = ensureP2pSecret(dataDir);
  const second = ensureP2pSecret(dataDir);
  assert.deepEqual(second, first);
});

test('a secret file readable by group or others is refused, not repaired', (t) => {
  const dataDir = tempDir(t);
  ensureP2pSecret(dataDir);
  const path = join(dataDir, P2P_SECRET_FILE_NAME);
  chmodSync(path, 0o644);
  assert.throws(
    () => ensureP2pSecret(dataDir),
    (error: unknown) => error instanceof P2pSecretFileError && /mode 644/.test(error.message) && !error.message.includes(readFileSync(path, 'utf8').trim()),
  );
  assert.equal(statSync(path).mode & 0o777, 0o644, 'the mode is left as found');
});

test('a secret file that is not a valid key is refused without echoing its content', (t) => {
  const dataDir = tempDir(t);
  const path = join(dataDir, P2P_SECRET_FILE_NAME);
  for (const garbage of ['hello', 'zz'.repeat(32), '00'.repeat(32), 'ff'.repeat(32), `${'ab'.repeat(32)}00`]) {
    writeFileSync(path, garbage, { mode: 0o600 });
    chmodSync(path, 0o600);
    assert.throws(
      () => ensureP2pSecret(dataDir),
      (error: unknown) => error instanceof P2pSecretFileError && /valid secp256k1 private key/.test(error.message) && !error.message.includes(garbage),
    );
  }
});
