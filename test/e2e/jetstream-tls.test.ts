/**
 * TLS to the broker, through real processes: a `nats-server` that requires TLS and verifies client certificates
 * (mutual TLS), with a CA, server and client certificates made by `openssl` for this test. The node and a relay
 * with `tls_ca_file`, `tls_cert_file` and `tls_key_file` publish and serve; a node that trusts only the system's CAs
 * (no `tls_ca_file`), and one without a client certificate, are refused, stay `unreachable` and keep serving.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';
import { relayJetstreamToml, startRelayProcess } from '../support/relay-process.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];
const STREAM = 'CHANGES';
const PREFIX = 'cdn';

interface Pki { readonly dir: string; readonly ca: string; readonly serverCert: string; readonly serverKey: string; readonly clientCert: string; readonly clientKey: string }

/** A throwaway CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA (P-256 keys). */
function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-e2e-nats-tls-'));
  const at = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...key, '-keyout', at('ca.key'), '-out', at('ca.pem'), '-days', '2', '-subj', '/CN=chain-node test CA');
  writeFileSync(at('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  writeFileSync(at('client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, subject] of [['server', '/CN=127.0.0.1'], ['client', '/CN=chain-node']] as const) {
    openssl('req', ...key, '-keyout', at(`${name}.key`), '-out', at(`${name}.csr`), '-subj', subject);
    openssl('x509', '-req', '-in', at(`${name}.csr`), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '2', '-out', at(`${name}.pem`), '-extfile', at(`${name}.ext`));
  }
  // The client key is a secret: the node refuses one readable by others.
  execFileSync('chmod', ['0600', at('client.key')]);
  return { dir, ca: at('ca.pem'), serverCert: at('server.pem'), serverKey: at('server.key'), clientCert: at('client.pem'), clientKey: at('client.key') };
}

function jetstreamToml(url: string, tls: { ca?: string; cert?: string; key?: string }): string {
  return `[delivery.jetstream]\nenabled = true\nservers = ["${url}"]\nstream = "${STREAM}"\nsubject_prefix = "${PREFIX}"\nretry_initial_ms = 100\n`
    + `tls_ca_file = ${JSON.stringify(tls.ca ?? '')}\ntls_cert_file = ${JSON.stringify(tls.cert ?? '')}\ntls_key_file = ${JSON.stringify(tls.key ?? '')}\n`;
}

async function publicationOf(node: NodeProcess): Promise<{ state: string; publishedSequence: string } | undefined> {
  const body = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { processors: Array<{ delivery?: { jetstream: { state: string; publishedSequence: string } } }> };
  return body.processors[0]?.delivery?.jetstream;
}

test('a broker requiring mutual TLS: the node and a relay with the CA and a client certificate publish and serve; without either they are refused and keep serving', async (t) => {
  const pki = makePki();
  t.after(() => removeDir(pki.dir));
  const server = await startNatsServer(['--tls', '--tlscert', pki.serverCert, '--tlskey', pki.serverKey, '--tlsverify', '--tlscacert', pki.ca]);
  t.after(() => server.close());
  const url = server.url;

  const node = await startNodeProcess({ toml: jetstreamToml(url, { ca: pki.ca, cert: pki.clientCert, key: pki.clientKey }), sets: FAST });
  t.after(async () => { await node.stop('SIGKILL'); removeDir(node.dir); });
  const noCa = await startNodeProcess({ toml: jetstreamToml(url, { cert: pki.clientCert, key: pki.clientKey }), sets: FAST });
  t.after(async () => { await noCa.stop('SIGKILL'); removeDir(noCa.dir); });
  const noClientCert = await startNodeProcess({ toml: jetstreamToml(url, { ca: pki.ca }), sets: FAST });
  t.after(async () => { await noClientCert.stop('SIGKILL'); removeDir(noClientCert.dir); });

  await waitUntil(node, async () => Number((await publicationOf(node))?.publishedSequence ?? 0) > 5, 60_000);
  assert.equal((await publicationOf(node))?.state, 'connected');

  const relay = await startRelayProcess({ toml: `${relayJetstreamToml([url], STREAM, PREFIX)}tls_ca_file = ${JSON.stringify(pki.ca)}\ntls_cert_file = ${JSON.stringify(pki.clientCert)}\ntls_key_file = ${JSON.stringify(pki.clientKey)}\n` });
  t.after(() => relay.stop('SIGKILL'));
  const page = await (await fetch(`${relay.baseUrl}/v1/processors/blobs/changes?limit=3`)).json() as { data: Array<{ sequence: string; cursor: string }> };
  assert.deepEqual(page.data.map((change) => change.sequence), ['1', '2', '3'], 'the relay reads the stream over TLS');
  const direct = await (await fetch(`${node.baseUrl}/v1/processors/blobs/changes?limit=3`)).json() as { data: Array<{ sequence: string; cursor: string }> };
  assert.deepEqual(page.data.map((change) => change.cursor), direct.data.map((change) => change.cursor), 'the same cursors as the node');

  for (const refused of [noCa, noClientCert]) {
    await waitUntil(refused, async () => refused.output.filter((line) => line.includes('JetStream unreachable')).length >= 2 && (await publicationOf(refused))?.state === 'unreachable', 60_000);
    assert.equal((await publicationOf(refused))?.publishedSequence, '0');
    assert.equal((await fetch(`${refused.baseUrl}/health/ready`)).status, 200, 'the node serves without the broker');
  }
  const keyText = execFileSync('cat', [pki.clientKey]).toString().split('\n')[1]!;
  assert.ok(![...node.output, ...noCa.output, ...noClientCert.output, ...relay.output].some((line) => line.includes(keyText)), 'no key material in the logs');
});
