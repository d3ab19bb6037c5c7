/**
 * `[delivery.jetstream]` (actors/node/jetstream-config.ts, jetstream-secrets.ts): off by default, bad values name the
 * key, the value and what was expected, and the NATS credentials come from an owner-only file or the environment,
 * never from TOML, and are never shown.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, describeConfig, loadConfig, validate } from '../../../actors/node/config.js';
import { readNatsSecrets } from '../../../actors/node/jetstream-secrets.js';

const rejected = (raw: unknown) => {
  try {
    validate(raw);
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return error.problems.map((p) => [p.key, p.value, p.expected]);
  }
  return assert.fail('expected a rejection');
};

test('[delivery.jetstream] is off by default and its bad values stop start-up naming key, value and expectation', () => {
  const js = validate({}).delivery.jetstream;
  assert.deepEqual([js.enabled, js.servers, js.stream, js.subject_prefix, js.replicas, js.descriptor_bucket], [false, [], 'CHAIN_NODE_CHANGES', 'chain-node.changes', 1, 'CHAIN_NODE_DESCRIPTORS']);
  assert.deepEqual(rejected({ actors: { publisher: { instances: 2 } } }), [['actors.publisher.instances', '2', 'expected 1 (one publisher per store: each instance\'s subject has one writer)']]);
  assert.deepEqual(rejected({ delivery: { jetstream: { descriptor_bucket: 'a.b' } } }), [['delivery.jetstream.descriptor_bucket', '"a.b"', 'expected a bucket name of 1-64 letters, digits, "_" or "-"']]);
  assert.deepEqual(rejected({ delivery: { jetstream: { enabled: true } } }), [['delivery.jetstream.servers', '(missing)', 'expected at least one NATS server (e.g. ["nats://127.0.0.1:4222"]) when delivery.jetstream.enabled = true']]);
  assert.deepEqual(rejected({ delivery: { jetstream: { replicas: 2 } } }), [['delivery.jetstream.replicas', '2', 'expected 1 or 3']]);
  assert.equal(rejected({ delivery: { jetstream: { servers: ['http://x:1'] } } })[0]![0], 'delivery.jetstream.servers.0');
  assert.equal(rejected({ delivery: { jetstream: { stream: 'a.b' } } })[0]![0], 'delivery.jetstream.stream');
  assert.equal(rejected({ delivery: { jetstream: { subject_prefix: 'a.*' } } })[0]![0], 'delivery.jetstream.subject_prefix');
  assert.equal(rejected({ delivery: { jetstream: { tls_cert_file: 'c.pem' } } })[0]![0], 'delivery.jetstream.tls_key_file');
  assert.match(rejected({ delivery: { jetstream: { password: 'x' } } })[0]![2]!, /unknown key; expected one of: enabled, servers/);
});

test('NATS credentials come from an owner-only environment file (or the environment), are checked, and are masked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-nats-config-'));
  try {
    const base = { ...validate({}).delivery.jetstream, enabled: true, servers: ['nats://127.0.0.1:4222'] };
    writeFileSync(join(dir, 'nats.env'), 'CHAIN_NODE_NATS_USER=publisher\nCHAIN_NODE_NATS_PASSWORD=s3cret-password\n');
    chmodSync(join(dir, 'nats.env'), 0o644);
    const loose = readNatsSecrets({ ...base, credentials_file: 'nats.env' }, dir);
    assert.deepEqual(loose, [{ key: 'delivery.jetstream.credentials_file', value: '"nats.env"', expected: 'a file readable only by its owner (mode is 644; run chmod 600)' }]);
    chmodSync(join(dir, 'nats.env'), 0o600);
    assert.deepEqual(readNatsSecrets({ ...base, credentials_file: 'nats.env' }, dir), { user: 'publisher', pass: 's3cret-password' });
    assert.deepEqual(readNatsSecrets(base, dir, { CHAIN_NODE_NATS_TOKEN: 'env-token' }), { token: 'env-token' });
    assert.deepEqual(readNatsSecrets(base, dir, { CHAIN_NODE_NATS_USER: 'u' }), [{ key: 'delivery.jetstream.credentials_file', value: 'the environment', expected: 'CHAIN_NODE_NATS_PASSWORD with CHAIN_NODE_NATS_USER' }]);
    const missing = readNatsSecrets({ ...base, creds_file: 'absent.creds', tls_ca_file: 'absent.pem' }, dir, {});
    assert.deepEqual((missing as Array<{ key: string }>).map((p) => p.key), ['delivery.jetstream.creds_file', 'delivery.jetstream.tls_ca_file']);
    const file = join(dir, 'node.toml');
    writeFileSync(file, '[delivery.jetstream]\nenabled = true\nservers = ["127.0.0.1:4222"]\ncredentials_file = "nats.env"\n');
    const loaded = loadConfig(file);
    const shown = JSON.stringify(describeConfig(loaded));
    assert.ok(!shown.includes('s3cret-password'), 'the password is never shown');
    assert.match(shown, /"credentials":"user_password"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
