import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnswers, rawExchange, type RawAnswer } from '../support/raw-http.js';
import { removeDir, startNodeProcess } from '../support/node-process.js';

const REQUEST_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const manyFields = Array.from({ length: 99 }, (_, i) => `X-F${i}: v\r\n`).join('');

// The requests uWebSockets.js 20.30 leaves without an answer (a silent close or a ten-second hang).
const ODD: Array<{ name: string; request: string; status: number; reason: string }> = [
  { name: 'an unknown method', request: 'FOO /v1/status HTTP/1.1\r\nHost: x\r\n\r\n', status: 405, reason: 'method' },
  { name: 'a request line without a version', request: 'GET /v1/status\r\n\r\n', status: 400, reason: 'no_version' },
  { name: 'HTTP/1.1 without Host', request: 'GET /v1/status HTTP/1.1\r\nAccept: */*\r\n\r\n', status: 400, reason: 'no_host' },
  { name: 'a hundred header fields', request: `GET /v1/status HTTP/1.1\r\nHost: x\r\n${manyFields}\r\n`, status: 431, reason: 'too_many_fields' },
  { name: 'a 100 KiB header', request: `GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100 * 1024)}\r\n\r\n`, status: 431, reason: 'head_too_large' },
  { name: 'HTTP/1.0', request: 'GET /v1/status HTTP/1.0\r\n\r\n', status: 505, reason: 'version' },
];

function assertRefusal(answer: RawAnswer, status: number, allow: string, label: string): void {
  assert.equal(answer.status, status, `${label}: ${answer.statusLine}`);
  assert.equal(answer.headers.get('content-type'), 'application/json', label);
  assert.equal(answer.headers.get('connection'), 'close', label);
  const { error } = JSON.parse(answer.body) as { error: { code: string; message: string; retryable: boolean; requestId: string; details?: { allowed?: string[] } } };
  assert.equal(error.code, status === 405 ? 'method_not_allowed' : 'invalid_request', label);
  assert.ok(error.message.length > 10, label);
  assert.equal(error.retryable, false, label);
  assert.match(error.requestId, REQUEST_ID, label);
  assert.equal(answer.headers.get('x-request-id'), error.requestId, `${label}: the id in the x-request-id header too`);
  if (status === 405) {
    assert.equal(answer.headers.get('allow'), allow, label);
    assert.deepEqual(error.details?.allowed, allow.split(', '), label);
  }
}

test('odd requests get an HTTP answer in the error shape on the API and both JSON-RPC listeners, and nothing else is disturbed', { skip: process.env.CDN_SKIP_NATIVE === '1' ? 'CDN_SKIP_NATIVE=1: native/http-guard is not built' : false }, async (t) => {
  const node = await startNodeProcess({ sets: ['devnet.block_time_ms=300'] });
  t.after(async () => {
    await node.stop('SIGKILL');
    removeDir(node.dir);
  });
  const listeners = [
    { name: 'api', port: Number(new URL(node.baseUrl).port), allow: 'GET, POST, DELETE' },
    { name: 'rpc_http', port: Number(new URL(node.rpcUrl).port), allow: 'POST' },
    { name: 'rpc_ws', port: Number(new URL(node.wsUrl).port), allow: 'GET' },
  ];
  const expected = new Map<string, number>();
  const count = (listener: string, reason: string) => expected.set(`${listener}/${reason}`, (expected.get(`${listener}/${reason}`) ?? 0) + 1);

  for (const listener of listeners) {
    for (const odd of ODD) {
      // One answer, then the end of the connection: no silent close (rawExchange rejects) and no hang.
      const answers = parseAnswers(await rawExchange(listener.port, [odd.request]));
      assert.equal(answers.length, 1, `${listener.name}, ${odd.name}`);
      assertRefusal(answers[0]!, odd.status, listener.allow, `${listener.name}, ${odd.name}`);
      count(listener.name, odd.reason);
    }
  }

  // Requests before a refused one on the same connection are answered first, pipelined or not.
  const api = listeners[0]!.port;
  const status = 'GET /v1/status HTTP/1.1\r\nHost: x\r\n\r\n';
  const pipelined = parseAnswers(await rawExchange(api, [status + status + 'PROPFIND /v1/status HTTP/1.1\r\nHost: x\r\n\r\n']));
  assert.deepEqual(pipelined.map((a) => a.status), [200, 200, 405]);
  assert.equal((JSON.parse(pipelined[0]!.body) as { chainId: number }).chainId, 1337);
  assertRefusal(pipelined[2]!, 405, 'GET, POST, DELETE', 'pipelined');
  count('api', 'method');
  const rpc = listeners[1]!.port;
  const call = '{"jsonrpc":"2.0","id":7,"method":"eth_chainId","params":[]}';
  const post = `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${call.length}\r\n\r\n${call}`;
  const keepAlive = parseAnswers(await rawExchange(rpc, [post, 'GET / HTTP/1.0\r\n\r\n'], true));
  assert.deepEqual(keepAlive.map((a) => a.status), [200, 505]);
  assert.deepEqual(JSON.parse(keepAlive[0]!.body), { jsonrpc: '2.0', id: 7, result: '0x539' });
  count('rpc_http', 'version');

  // Served as before, the lanes never restarted, and /metrics counts each refusal by listener and reason.
  assert.equal((await fetch(`${node.baseUrl}/v1/status`)).status, 200);
  const chainId = await fetch(node.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: call });
  assert.deepEqual(await chainId.json(), { jsonrpc: '2.0', id: 7, result: '0x539' });
  const ready = await fetch(`${node.baseUrl}/health/ready`);
  assert.equal(ready.status, 200);
  const { lanes } = (await ready.json()) as { lanes: { lane: string; restarts: number }[] };
  assert.deepEqual(lanes.filter((lane) => lane.restarts > 0), []);
  const metrics = await (await fetch(`${node.baseUrl}/metrics`)).text();
  for (const [key, value] of expected) {
    const [listener, reason] = key.split('/');
    assert.match(metrics, new RegExp(`^chain_node_http_refused_requests_total\\{listener="${listener}",reason="${reason}"\\} ${value}$`, 'm'), key);
  }
});
