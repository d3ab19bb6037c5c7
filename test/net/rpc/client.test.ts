import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRpcClient, type RpcClientOptions } from '../../../net/rpc/client.js';
import { UpstreamError } from '../../../net/rpc/errors.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { freePort } from '../../support/ports.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

const FAST: Omit<RpcClientOptions, 'url'> = { timeoutMs: 2000, maxRetries: 3, backoffInitialMs: 5, backoffMaxMs: 20 };

const upstreamError = (check: (error: UpstreamError) => void) => (error: unknown) => {
  assert.ok(error instanceof UpstreamError, String(error));
  check(error);
  return true;
};

describe('JSON-RPC client against anvil and a scripted front', () => {
  let anvil: Anvil;
  let front: FakeUpstream;

  before(async () => {
    anvil = await startAnvil();
    front = await startFakeUpstream(anvil.url);
  });
  after(async () => {
    await front?.close();
    await anvil?.stop();
  });

  it('calls and batches against a real node, results in call order', async () => {
    const client = createRpcClient({ url: anvil.url, ...FAST });
    assert.equal(await client.call('eth_chainId', []), '0x7a69');
    const [block, chainId, number] = await client.batch([
      { method: 'eth_getBlockByNumber', params: ['0x0', false] },
      { method: 'eth_chainId', params: [] },
      { method: 'eth_blockNumber', params: [] },
    ]);
    assert.equal((block as { number: string }).number, '0x0');
    assert.equal(chainId, '0x7a69');
    assert.match(String(number), /^0x[0-9a-f]+$/);
  });

  it('a JSON-RPC error is the upstream\'s answer: reported at once with its code, never retried', async () => {
    const client = createRpcClient({ url: front.url, ...FAST });
    const before = front.seen.length;
    await assert.rejects(client.call('eth_noSuchMethod', []), upstreamError((error) => {
      assert.equal(error.failure, 'rpc');
      assert.equal(error.method, 'eth_noSuchMethod');
      assert.equal(typeof error.code, 'number');
      assert.equal(error.attempts, 1);
    }));
    assert.equal(front.seen.length - before, 1, 'one request');
  });

  it('HTTP 5xx, 429 and dropped connections are retried with backoff until the upstream answers', async () => {
    const client = createRpcClient({ url: front.url, ...FAST });
    const before = front.seen.length;
    front.script({ status: 503 }, { status: 429, headers: { 'retry-after': '0' } }, { drop: true });
    assert.equal(await client.call('eth_chainId', []), '0x7a69');
    assert.equal(front.seen.length - before, 4, 'three failures, then the answer');
  });

  it('other HTTP statuses are not retried and say so', async () => {
    const client = createRpcClient({ url: front.url, ...FAST });
    front.script({ status: 401, body: 'missing api key' });
    await assert.rejects(client.call('eth_chainId', []), upstreamError((error) => {
      assert.equal(error.failure, 'http');
      assert.equal(error.status, 401);
      assert.equal(error.attempts, 1);
      assert.match(error.message, /HTTP 401 missing api key/);
    }));
  });

  it('a hanging upstream times out each attempt, then fails with a timeout error', async () => {
    const client = createRpcClient({ url: front.url, ...FAST, timeoutMs: 100, maxRetries: 1 });
    front.script({ hang: true }, { hang: true });
    await assert.rejects(client.call('eth_chainId', []), upstreamError((error) => {
      assert.equal(error.failure, 'timeout');
      assert.equal(error.attempts, 2);
      assert.match(error.message, /no answer within 100 ms/);
    }));
  });

  it('a batch answered with one error object (batches refused) fails with that error', async () => {
    const client = createRpcClient({ url: front.url, ...FAST });
    front.script({ json: { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are disabled' } } });
    await assert.rejects(client.batch([{ method: 'eth_chainId', params: [] }, { method: 'eth_blockNumber', params: [] }]), upstreamError((error) => {
      assert.equal(error.failure, 'rpc');
      assert.equal(error.code, -32600);
      assert.equal(error.method, 'eth_chainId+eth_blockNumber');
    }));
  });

  it('credentials become a Basic authorization header, the query is sent, and neither appears in errors', async () => {
    const url = `http://alice:hunter2@127.0.0.1:${front.port}/rpc?apikey=sekret123`;
    const client = createRpcClient({ url, ...FAST, maxRetries: 1 });
    assert.equal(await client.call('eth_chainId', []), '0x7a69');
    const request = front.seen.at(-1)!;
    assert.equal(request.url, '/rpc?apikey=sekret123');
    assert.equal(request.authorization, `Basic ${Buffer.from('alice:hunter2').toString('base64')}`);
    front.down({ status: 502, body: 'bad gateway for /rpc?apikey=sekret123' });
    try {
      await assert.rejects(client.call('eth_chainId', []), upstreamError((error) => {
        assert.equal(error.attempts, 2);
        for (const secret of ['hunter2', 'alice', 'sekret123']) assert.ok(!error.message.includes(secret), `no ${secret} in: ${error.message}`);
        assert.match(error.message, new RegExp(`http://127\\.0\\.0\\.1:${front.port}/rpc`));
        assert.equal(client.endpoint, `http://127.0.0.1:${front.port}/rpc?…`);
      }));
    } finally {
      front.up();
    }
  });

  it('an upstream that is down: bounded retries, then a clear transport error', async () => {
    const port = await freePort();
    const client = createRpcClient({ url: `http://127.0.0.1:${port}`, ...FAST, maxRetries: 2 });
    await assert.rejects(client.call('eth_blockNumber', []), upstreamError((error) => {
      assert.equal(error.failure, 'transport');
      assert.equal(error.attempts, 3);
      assert.match(error.message, /ECONNREFUSED/);
      assert.match(error.message, /check that the upstream node is running/);
    }));
  });

  it('shutdown aborts a call waiting for its next retry', async () => {
    const shutdown = new AbortController();
    const port = await freePort();
    const client = createRpcClient({ url: `http://127.0.0.1:${port}`, ...FAST, maxRetries: 5, backoffInitialMs: 60_000, backoffMaxMs: 60_000, signal: shutdown.signal });
    const pending = client.call('eth_blockNumber', []);
    setTimeout(() => shutdown.abort(new Error('stopping')), 50);
    const started = Date.now();
    await assert.rejects(pending, /stopping/);
    assert.ok(Date.now() - started < 30_000, 'did not wait out the 60 s backoff');
  });
});
