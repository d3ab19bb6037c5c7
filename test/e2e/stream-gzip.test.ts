/**
 * The change stream over gzip, end to end against a real node following an erc20 instance (each
 * devnet block a burst of balance changes): the eventsource package, curl --compressed and headless
 * Chromium's EventSource each receive every change of several blocks, in order, with the cursor as
 * id, on a `Content-Encoding: gzip` response; curl resumes with Last-Event-ID over gzip; a client
 * that does not ask for gzip still gets the plain frames.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { EventSource } from 'eventsource';
import { chromiumPage } from '../support/chromium.js';
import { removeDir, startNodeProcess, waitUntil, type NodeProcess } from '../support/node-process.js';
import { encodingRecorder, openNodeHttpStream } from '../api/sse/sse-clients.js';

const TOML = ['[[processors]]', 'id = "erc20"', 'kind = "erc20"', 'tokens = "*"', ''].join('\n');
const SETS = ['devnet.block_time_ms=300', 'devnet.reorg_every=0', 'devnet.transactions_per_block=6', 'devnet.blob_transactions_per_block=0', 'sse.heartbeat_seconds=1'];
const STREAM = '/v1/processors/erc20/stream';
/** Blocks each client must see whole before its changes are compared with the polled log. */
const BLOCKS = 4;

interface Envelope { sequence: string; cursor: string; operation: string; block: { number: number } | null }
interface Received { readonly id: string; readonly event: string; readonly data: string }

async function headCursor(node: NodeProcess): Promise<string | null> {
  return ((await (await fetch(`${node.baseUrl}/v1/processors/erc20/changes/head`)).json()) as { cursor: string | null }).cursor;
}

async function changesAfter(node: NodeProcess, after: string, count: number): Promise<Envelope[]> {
  const all: Envelope[] = [];
  let cursor = after;
  while (all.length < count) {
    const page = (await (await fetch(`${node.baseUrl}/v1/processors/erc20/changes?limit=500&after=${cursor}`)).json()) as { data: Envelope[]; nextCursor: string | null };
    if (page.data.length === 0) break;
    all.push(...page.data);
    cursor = page.data.at(-1)!.cursor;
  }
  return all.slice(0, count);
}

/** Changes that cover `blocks` whole blocks: everything up to the first change of block `blocks + 1`. */
function wholeBlocks(received: readonly Received[], blocks: number): Received[] | null {
  const numbers: number[] = [];
  for (let i = 0; i < received.length; i += 1) {
    const number = (JSON.parse(received[i]!.data) as Envelope).block!.number;
    if (numbers.at(-1) !== number) numbers.push(number);
    if (numbers.length > blocks) return received.slice(0, i);
  }
  return null;
}

/** The received events equal the polled log after `after`: same ids, operations and envelopes, in order. */
async function assertMatchesLog(node: NodeProcess, who: string, after: string, received: readonly Received[]): Promise<void> {
  const log = await changesAfter(node, after, received.length);
  assert.equal(received.length, log.length, `${who}: as many changes as the log holds after the cursor`);
  assert.deepEqual(received.map((r) => r.id), log.map((e) => e.cursor), `${who}: every change in order, the id its cursor`);
  assert.deepEqual(received.map((r) => r.event), log.map((e) => e.operation), `${who}: the event name is the operation`);
  assert.deepEqual(received.map((r) => JSON.parse(r.data) as unknown), log, `${who}: the envelopes are the polled ones`);
  const perBlock = new Map<number, number>();
  for (const envelope of log) perBlock.set(envelope.block!.number, (perBlock.get(envelope.block!.number) ?? 0) + 1);
  assert.ok([...perBlock.values()].some((count) => count > 1), `${who}: blocks of several changes (bursts): ${[...perBlock.values()]}`);
}

/** curl --compressed with `-i`: headers, then the decoded body, frames parsed as they come. */
function curlStream(url: string, headers: Record<string, string> = {}) {
  const child = spawn('curl', ['-sS', '-N', '-i', '--compressed', ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]), url], { stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => { text += chunk; });
  const parsed = () => {
    const split = text.indexOf('\r\n\r\n');
    if (split < 0) return { head: '', events: [] as Received[] };
    const events: Received[] = [];
    for (const frame of text.slice(split + 4).split('\n\n').slice(0, -1)) {
      const fields = Object.fromEntries(frame.split('\n').filter((line) => !line.startsWith(':')).map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]));
      if (fields.event && fields.event !== 'hello') events.push({ id: fields.id ?? '', event: fields.event, data: fields.data ?? '' });
    }
    return { head: text.slice(0, split).toLowerCase(), events };
  };
  return { child, parsed, stop: () => child.kill() };
}

async function until<T>(what: string, check: () => T | null | Promise<T | null>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('gzip streams over an erc20 instance: eventsource, curl --compressed and Chromium receive every change of several blocks in order; Last-Event-ID resumes over gzip; plain clients unchanged', async (t) => {
  const node = await startNodeProcess({ toml: TOML, sets: SETS, readyTimeoutMs: 120_000 });
  t.after(async () => { await node.stop(); removeDir(node.dir); });
  await waitUntil(node, async () => (await headCursor(node)) !== null, 60_000);
  const after = (await headCursor(node))!;
  const url = `${node.baseUrl}${STREAM}?after=${after}`;

  await t.test('the eventsource package', async () => {
    const recorder = encodingRecorder();
    const source = new EventSource(url, { fetch: recorder.fetch });
    const received: Received[] = [];
    for (const type of ['apply', 'undo', 'finalized', 'reset_required']) source.addEventListener(type, (event) => received.push({ id: event.lastEventId, event: type, data: event.data }));
    try {
      const whole = await until('eventsource to see whole blocks', () => wholeBlocks(received, BLOCKS));
      assert.deepEqual(recorder.encodings, ['gzip']);
      await assertMatchesLog(node, 'eventsource', after, whole);
    } finally {
      source.close();
    }
  });

  const haveCurl = spawnSync('curl', ['--version']).status === 0;
  await t.test('curl --compressed, and a Last-Event-ID resume', { skip: haveCurl ? false : 'no curl on this machine' }, async () => {
    const curl = curlStream(url);
    let whole: Received[];
    try {
      whole = await until('curl to see whole blocks', () => wholeBlocks(curl.parsed().events, BLOCKS));
      assert.match(curl.parsed().head, /\r\ncontent-encoding: gzip/);
    } finally {
      curl.stop();
    }
    await assertMatchesLog(node, 'curl', after, whole);
    const resumeAt = whole[Math.floor(whole.length / 2)]!.id;
    const resumed = curlStream(`${node.baseUrl}${STREAM}`, { 'Last-Event-ID': resumeAt });
    try {
      const more = await until('the resumed curl to see whole blocks', () => wholeBlocks(resumed.parsed().events, 2));
      assert.match(resumed.parsed().head, /\r\ncontent-encoding: gzip/);
      await assertMatchesLog(node, 'curl resumed with Last-Event-ID', resumeAt, more);
    } finally {
      resumed.stop();
    }
  });

  await t.test("headless Chromium's EventSource", async (sub) => {
    const page = await chromiumPage(sub, `${node.baseUrl}/v1/status`, { width: 800, height: 600 });
    if (!page) return;
    const encodings: Array<string | undefined> = [];
    page.on('response', (response) => {
      if (response.url().includes(STREAM)) encodings.push(response.headers()['content-encoding']);
    });
    await page.evaluate((streamUrl) => {
      const events: Received[] = [];
      (globalThis as unknown as { received: Received[] }).received = events;
      const source = new EventSource(streamUrl);
      for (const type of ['apply', 'undo', 'finalized', 'reset_required']) source.addEventListener(type, (event) => events.push({ id: event.lastEventId, event: type, data: event.data }));
    }, url);
    const whole = await until('Chromium to see whole blocks', async () => wholeBlocks(await page.evaluate(() => (globalThis as unknown as { received: Received[] }).received), BLOCKS));
    assert.deepEqual(encodings, ['gzip']);
    await assertMatchesLog(node, 'Chromium', after, whole);
  });

  await t.test('a client that does not ask for gzip gets the plain frames', async (sub) => {
    const plain = await openNodeHttpStream(sub, url);
    assert.equal(plain.headers['content-encoding'], undefined);
    const { bytes } = await plain.readUntil((body) => (body.toString('utf8').match(/^id: /gm) ?? []).length >= 3);
    assert.match(bytes.toString('utf8'), /^event: hello\ndata: .*\n\nid: \S+\nevent: apply\ndata: \{"apiVersion":"1"/);
  });
});
