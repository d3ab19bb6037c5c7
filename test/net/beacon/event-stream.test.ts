/**
 * The Beacon API event-stream reader: the text/event-stream framing (event and data fields, comments,
 * CR/LF/CRLF line ends split anywhere across chunks, multi-line data) and the reconnect after a refused or
 * ended stream, reported as a state change.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamParser, subscribeBeaconEvents } from '../../../net/beacon/event-stream.js';

describe('event-stream parser', () => {
  test('events, comments and every line end, split at every byte', () => {
    const text = ': hello\r\nevent: finalized_checkpoint\r\ndata: {"a":1}\r\n\r\nevent: x\rdata: one\rdata: two\r\rdata: plain\n\n';
    for (let cut = 0; cut <= text.length; cut++) {
      const seen: Array<[string, string]> = [];
      const parser = new EventStreamParser((topic, data) => seen.push([topic, data]));
      parser.push(text.slice(0, cut));
      parser.push(text.slice(cut));
      assert.deepEqual(seen, [['finalized_checkpoint', '{"a":1}'], ['x', 'one\ntwo'], ['message', 'plain']], `cut at ${cut}`);
    }
  });

  test('an endless line is refused instead of growing memory', () => {
    const parser = new EventStreamParser(() => {});
    assert.throws(() => { for (let i = 0; i < 100; i++) parser.push('x'.repeat(65_536)); }, /over/);
  });
});

describe('event-stream subscription', () => {
  const closers: Array<() => void> = [];
  after(() => { for (const close of closers) close(); });

  test('a refused stream is retried; once served, events arrive and the state says connected', async () => {
    let requests = 0;
    const server = createServer((request, response) => {
      requests += 1;
      if (requests === 1) return void response.writeHead(404, { 'content-type': 'application/json' }).end('{}');
      assert.equal(request.url, '/eth/v1/events?topics=finalized_checkpoint,light_client_finality_update');
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('event: finalized_checkpoint\ndata: {"epoch":"7"}\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => { server.closeAllConnections(); server.close(); });
    const states: string[] = [];
    const event = await new Promise<[string, string]>((resolve) => {
      const stream = subscribeBeaconEvents({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, topics: ['finalized_checkpoint', 'light_client_finality_update'], backoffInitialMs: 5, backoffMaxMs: 10,
        onEvent: (topic, data) => resolve([topic, data]),
        onState: (state) => states.push(state.connected ? 'connected' : `down: ${state.reason}`),
      });
      closers.push(() => stream.close());
    });
    assert.deepEqual(event, ['finalized_checkpoint', '{"epoch":"7"}']);
    assert.deepEqual(states, ['down: HTTP 404 application/json', 'connected']);
  });
});
