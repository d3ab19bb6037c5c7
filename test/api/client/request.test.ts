import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createNodeClient, NodeHttpError, UnsafeRequestPathError } from '../../../api/client/index.js';

interface Call { url: string; authorization: string | null }

function recordingFetch(calls: Call[], status = 200, body = '{"ok":true}'): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(input), authorization: new Headers(init?.headers).get('authorization') });
    return new Response(body, { status, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
}

test('relative paths resolve against the base path, root paths against the origin, with the bearer attached', async () => {
  const calls: Call[] = [];
  const client = createNodeClient({ baseUrl: 'https://edge.example/chain', token: 's3cret', fetch: recordingFetch(calls) });
  await client.request('v1/status');
  await client.request('/v1/status');
  await client.request('v1/processors/blobs/changes?after=abc');
  assert.deepEqual(calls.map((c) => c.url), ['https://edge.example/chain/v1/status', 'https://edge.example/v1/status', 'https://edge.example/chain/v1/processors/blobs/changes?after=abc']);
  assert.ok(calls.every((c) => c.authorization === 'Bearer s3cret'));
});

test('schemes, protocol-relative paths, backslashes and cross-origin resolution are refused before anything is sent', async () => {
  const calls: Call[] = [];
  const client = createNodeClient({ baseUrl: 'http://127.0.0.1:8080/', token: 's3cret', fetch: recordingFetch(calls) });
  const refused = ['https://evil.example/v1/status', 'HTTP://127.0.0.1:8080/v1/status', 'javascript:alert(1)', 'data:text/plain,x', '//evil.example/v1', '/\\evil.example/v1', '\\\\evil.example', 'v1/\u0000x', 'mailto:a@b', ''];
  for (const path of refused) {
    await assert.rejects(() => client.request(path), UnsafeRequestPathError, JSON.stringify(path));
    assert.throws(() => client.resolve(path), UnsafeRequestPathError);
  }
  assert.equal(calls.length, 0, 'no request was sent, so no bearer left the process');
  assert.equal(client.resolve('../../v1/status').origin, 'http://127.0.0.1:8080', 'dot segments stay on the origin');
});

test('a base URL that is not http(s) or carries credentials is refused; error answers become NodeHttpError without the token', async () => {
  assert.throws(() => createNodeClient({ baseUrl: 'file:///etc/passwd' }), UnsafeRequestPathError);
  assert.throws(() => createNodeClient({ baseUrl: 'http://user:pw@127.0.0.1:8080' }), UnsafeRequestPathError);
  const calls: Call[] = [];
  const body = JSON.stringify({ error: { code: 'unauthorized', message: 'bearer required', retryable: false, requestId: 'r1' } });
  const client = createNodeClient({ baseUrl: 'http://127.0.0.1:8080', token: 'tok-123', fetch: recordingFetch(calls, 401, body) });
  const error = await client.json('/v1/status').then(() => null, (e: unknown) => e);
  assert.ok(error instanceof NodeHttpError);
  assert.equal(error.status, 401);
  assert.equal(error.code, 'unauthorized');
  assert.equal(error.requestId, 'r1');
  assert.ok(!String(error.message).includes('tok-123'));
});
