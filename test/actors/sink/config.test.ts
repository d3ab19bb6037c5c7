import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CREDENTIAL_VARIABLE, describeSinkConfig, loadSinkConfig } from '../../../actors/sink/config.js';
import { ConfigError } from '../../../actors/node/toml-config.js';
import { clientConfig, connectionTarget, describeTarget, passFilePassword } from '../../../actors/sink/pg-connection.js';
import { PROJECT_ROOT } from '../../support/paths.js';

const SECRET = 'a-consumer-secret-of-32-characters';

function fixture(t: { after(fn: () => void): void }, toml: string, credential = `${CREDENTIAL_VARIABLE}=${SECRET}\n`, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-sink-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'sink.env'), credential);
  chmodSync(join(dir, 'sink.env'), mode);
  writeFileSync(join(dir, 'sink.toml'), toml);
  return join(dir, 'sink.toml');
}

const BASE = '[consumer]\ncredentials_file = "sink.env"\n[[processors]]\nid = "erc20"\n';

function refused(file: string, key: string, expected: RegExp, overrides: string[] = []): void {
  assert.throws(() => loadSinkConfig(file, overrides), (error: unknown) => {
    assert.ok(error instanceof ConfigError, String(error));
    const problem = error.problems.find((p) => p.key === key);
    assert.ok(problem, `a problem names ${key}: ${error.message}`);
    assert.match(problem.expected, expected);
    return true;
  });
}

test('a minimal sink.toml loads with its defaults; the credential comes from the file and is masked in the description', (t) => {
  const loaded = loadSinkConfig(fixture(t, BASE));
  assert.equal(loaded.credential, SECRET);
  assert.equal(loaded.config.node.url, 'http://127.0.0.1:8080');
  assert.equal(loaded.config.postgres.schema, 'chain_node');
  assert.equal(loaded.config.metrics.listen, '127.0.0.1:9464', '/metrics binds to loopback by default');
  assert.equal(loaded.config.sink.on_reset, 'rebootstrap');
  assert.equal(loaded.config.consumer.role, 'required');
  assert.doesNotMatch(JSON.stringify(describeSinkConfig(loaded)), new RegExp(SECRET));
});

test('bad configs are refused naming the key, the value and what was expected', (t) => {
  refused(fixture(t, `${BASE}[postgres]\nurl = "postgresql://sink:hunter2@127.0.0.1/chain"\n`), 'postgres.url', /PGPASSWORD/);
  refused(fixture(t, `${BASE}[postgres]\nurl = "postgresql://sink@127.0.0.1/chain?password=x"\n`), 'postgres.url', /password in the configuration is refused/);
  refused(fixture(t, `${BASE}[postgres]\nurl = "mysql://127.0.0.1/chain"\n`), 'postgres.url', /postgresql:\/\//);
  refused(fixture(t, `${BASE}[postgres]\nschema = "Chain-Node"\n`), 'postgres.schema', /identifier/);
  refused(fixture(t, `${BASE}[sink]\non_reset = "ignore"\n`), 'sink.on_reset', /rebootstrap|stop/);
  refused(fixture(t, `${BASE}[node]\nurl = "http://user:pw@127.0.0.1:8080"\n`), 'node.url', /without credentials/);
  refused(fixture(t, `${BASE}[metrics]\nlisten = "127.0.0.1:99999"\n`), 'metrics.listen', /port/);
  refused(fixture(t, BASE), 'consumer.batch_changes', /./, ['consumer.batch_changes=0']);
  refused(fixture(t, `${BASE}colour = "blue"\n`), 'processors.0.colour', /unknown key/);
  refused(fixture(t, '[consumer]\ncredentials_file = "sink.env"\n'), 'processors', /./);
  refused(fixture(t, `${BASE}[[processors]]\nid = "erc20"\n`), 'processors.1.id', /unique/);
  refused(fixture(t, `${BASE}table_prefix = "Bad-Prefix"\n`), 'processors.0.table_prefix', /identifier/);
  refused(fixture(t, BASE), 'consumer.batch_changes', /./, ['consumer.batch_changes=abc']);
});

test('the consumer credential: a file others can read, a missing line or a short secret are refused; the environment is used without a file', (t) => {
  refused(fixture(t, BASE, `${CREDENTIAL_VARIABLE}=${SECRET}\n`, 0o644), 'consumer.credentials_file', /chmod 600/);
  refused(fixture(t, BASE, 'OTHER=1\n'), 'consumer.credentials_file', new RegExp(CREDENTIAL_VARIABLE));
  refused(fixture(t, BASE, `${CREDENTIAL_VARIABLE}=short\n`), 'consumer.credentials_file', /at least 16/);
  const withoutFile = fixture(t, '[[processors]]\nid = "blobs"\n');
  const saved = process.env[CREDENTIAL_VARIABLE];
  t.after(() => { if (saved === undefined) delete process.env[CREDENTIAL_VARIABLE]; else process.env[CREDENTIAL_VARIABLE] = saved; });
  delete process.env[CREDENTIAL_VARIABLE];
  refused(withoutFile, 'consumer.credentials_file', /set in the environment/);
  process.env[CREDENTIAL_VARIABLE] = SECRET;
  assert.equal(loadSinkConfig(withoutFile).credential, SECRET);
});

test('PostgreSQL settings: the URL or the PG* variables; the password from PGPASSWORD or the password file, never in the description', async (t) => {
  assert.equal(describeTarget({ url: 'postgresql://sink@db.example:6543/chain' }, {}), 'sink@db.example:6543/chain');
  assert.equal(describeTarget({ url: '' }, { PGHOST: '10.0.0.5', PGPORT: '5433', PGUSER: 'u', PGDATABASE: 'd', PGPASSWORD: 'secret-pw' }), 'u@10.0.0.5:5433/d');
  const dir = mkdtempSync(join(tmpdir(), 'cdn-pgpass-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'pgpass');
  writeFileSync(file, '# comment\nother:5432:*:*:wrong\n127.0.0.1:5432:chain:sink:pa\\:ss\n*:*:*:*:fallback\n');
  chmodSync(file, 0o600);
  const target = connectionTarget({ url: 'postgresql://sink@127.0.0.1:5432/chain' }, {});
  assert.equal(passFilePassword(target, { PGPASSFILE: file }), 'pa:ss');
  assert.equal(passFilePassword({ ...target, user: 'x' }, { PGPASSFILE: file }), 'fallback');
  chmodSync(file, 0o644);
  assert.equal(passFilePassword(target, { PGPASSFILE: file }), undefined, 'a password file others can read is ignored, as libpq does');
  const config = clientConfig({ url: 'postgresql://sink@127.0.0.1:5432/chain', application_name: 'x', connect_timeout_ms: 1000 }, { PGPASSWORD: 'from-env' });
  assert.equal(await (config.password as () => Promise<string>)(), 'from-env');
  assert.doesNotMatch(JSON.stringify(config), /from-env/);
});

test('examples/postgres-sink/sink.toml is a valid configuration of the devnet\'s erc20 and blobs instances', (t) => {
  const saved = process.env[CREDENTIAL_VARIABLE];
  t.after(() => { if (saved === undefined) delete process.env[CREDENTIAL_VARIABLE]; else process.env[CREDENTIAL_VARIABLE] = saved; });
  process.env[CREDENTIAL_VARIABLE] = SECRET;
  const loaded = loadSinkConfig(join(PROJECT_ROOT, 'examples/postgres-sink/sink.toml'), ['consumer.credentials_file=']);
  assert.deepEqual(loaded.config.processors.map((p) => p.id), ['erc20', 'blobs']);
  assert.equal(loaded.config.metrics.listen, '127.0.0.1:9464');
});

test('--set overrides reach every sink key, the optional URL and listen address included', (t) => {
  const loaded = loadSinkConfig(fixture(t, BASE), ['node.follow_url=http://127.0.0.1:8090', 'metrics.listen=', 'sink.on_reset=stop', 'postgres.schema=sink']);
  assert.equal(loaded.config.node.follow_url, 'http://127.0.0.1:8090');
  assert.equal(loaded.config.metrics.listen, '');
  assert.equal(loaded.config.sink.on_reset, 'stop');
  refused(fixture(t, BASE), 'node.follow_url', /http\(s\) URL/, ['node.follow_url=ftp://x']);
});

test('a declared mapping (a user\'s kind) loads; a bad one is refused naming the key', (t) => {
  const GAS = '[consumer]\ncredentials_file = "sink.env"\n[[processors]]\nid = "gas"\n[[processors.mapping]]\ncollection = "blocks"\nput = "gas_stats.block.put"\n';
  const loaded = loadSinkConfig(fixture(t, `${GAS}delete = "gas_stats.block.delete"\nblock_number = "lastChange.blockNumber"\ncolumns = [{ name = "gas_used", type = "numeric", field = "gasUsed" }]\nindexes = ["gas_used"]\n`));
  assert.deepEqual(loaded.config.processors[0]!.mapping[0]!.columns, [{ name: 'gas_used', type: 'numeric', field: 'gasUsed' }]);
  refused(fixture(t, `${GAS}columns = [{ name = "gas_used", type = "money", field = "gasUsed" }]\n`), 'processors.0.mapping.0.columns.0.type', /numeric/);
  refused(fixture(t, `${GAS}columns = [{ name = "gas_used", type = "numeric", field = "gas'); DROP TABLE x; --" }]\n`), 'processors.0.mapping.0.columns.0.field', /JSON field/);
  refused(fixture(t, `${GAS}columns = [{ name = "data", type = "text", field = "x" }]\n`), 'processors.0.mapping.0.columns.0.name', /common columns/);
  refused(fixture(t, `${GAS}indexes = ["nope"]\n`), 'processors.0.mapping.0.indexes.0', /declared columns/);
  refused(fixture(t, `${GAS}block_number = "a..b"\n`), 'processors.0.mapping.0.block_number', /JSON field/);
  refused(fixture(t, `${GAS}[[processors.mapping]]\ncollection = "blocks"\nput = "other.put"\n`), 'processors.0.mapping.1.collection', /once/);
});
