/**
 * The publisher's credentials against a real `nats-server` started with authorization: user and password, or a
 * token, read from the owner-only environment file named by `credentials_file` (never from the TOML). With the right
 * secret the node publishes; with a wrong one it stays `unreachable`, keeps serving, and never logs the secret.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { startNatsServer } from '../support/nats-server.js';

const FAST = ['devnet.block_time_ms=100', 'devnet.reorg_every=0', 'devnet.finality_lag=4', 'finality.poll_interval_ms=100', 'runtime.pool_threads=1'];

async function publicationOf(node: NodeProcess): Promise<{ state: string; publishedSequence: string } | undefined> {
  const body = await (await fetch(`${node.baseUrl}/v1/status`)).json() as { processors: Array<{ delivery?: { jetstream: { state: string; publishedSequence: string } } }> };
  return body.processors[0]?.delivery?.jetstream;
}

/** A node whose credentials file (mode 0600, in its own directory) holds `lines`. */
async function nodeWithCredentials(url: string, lines: string[]): Promise<NodeProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-e2e-nats-auth-'));
  const file = join(dir, 'nats.env');
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  const toml = `[delivery.jetstream]\nenabled = true\nservers = ["${url}"]\nretry_initial_ms = 100\ncredentials_file = ${JSON.stringify(file)}\n`;
  return startNodeProcess({ toml, sets: FAST, dir });
}

for (const { name, serverArgs, good, bad, secret } of [
  { name: 'user and password', serverArgs: ['--user', 'cdn', '--pass', 'pw-0f3a9c1e77'], good: ['CHAIN_NODE_NATS_USER=cdn', 'CHAIN_NODE_NATS_PASSWORD=pw-0f3a9c1e77'], bad: ['CHAIN_NODE_NATS_USER=cdn', 'CHAIN_NODE_NATS_PASSWORD=pw-wrong-51d2'], secret: 'pw-wrong-51d2' },
  { name: 'a token', serverArgs: ['--auth', 'tok-8e6b2d4c90'], good: ['CHAIN_NODE_NATS_TOKEN=tok-8e6b2d4c90'], bad: ['CHAIN_NODE_NATS_TOKEN=tok-wrong-a7c3'], secret: 'tok-wrong-a7c3' },
]) {
  test(`a server requiring ${name}: the right secret from credentials_file publishes, a wrong one stays unreachable and is never logged`, async (t) => {
    const server = await startNatsServer(serverArgs);
    t.after(() => server.close());
    const right = await nodeWithCredentials(server.url, good);
    t.after(async () => { await right.stop('SIGKILL'); removeDir(right.dir); });
    const wrong = await nodeWithCredentials(server.url, bad);
    t.after(async () => { await wrong.stop('SIGKILL'); removeDir(wrong.dir); });
    await waitUntil(right, async () => Number((await publicationOf(right))?.publishedSequence ?? 0) > 5, 60_000);
    assert.equal((await publicationOf(right))?.state, 'connected');
    // Reported about every second: wait for a report made after two refused connection attempts.
    await waitUntil(wrong, async () => wrong.output.filter((line) => line.includes('JetStream unreachable')).length >= 2 && (await publicationOf(wrong))?.state === 'unreachable', 60_000);
    assert.equal((await publicationOf(wrong))?.publishedSequence, '0');
    assert.equal((await fetch(`${wrong.baseUrl}/health/ready`)).status, 200, 'the node serves without the broker');
    assert.ok(wrong.output.some((line) => /authorization/i.test(line)), 'the refusal is logged');
    assert.ok(![...wrong.output, ...right.output].some((line) => line.includes(secret) || line.includes(serverArgs[serverArgs.length - 1]!)), 'no secret in the logs');
  });
}
