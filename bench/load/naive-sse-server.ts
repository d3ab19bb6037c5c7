/**
 * `node naive-sse-server.js --data-dir D [--poll-ms 10]`: the SSE baseline. A plain `node:http`
 * fan-out over the node's change log (LMDB, opened read-only from this process): every `poll-ms` it
 * reads the changes after the last one it sent, parses each envelope once, and writes it to every
 * open stream with its own `JSON.stringify` — one serialisation and one write per change per client.
 * Streams start at the log's head when they connect.
 */
import { createServer, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { changeHead, readChanges } from '../../store/change-log.js';
import { openStore } from '../../store/store.js';
import { listenAndAnnounce } from './listening.js';

const { values } = parseArgs({
  options: { 'data-dir': { type: 'string' }, instance: { type: 'string', default: 'blobs' }, 'poll-ms': { type: 'string', default: '10' } },
});
if (!values['data-dir']) throw new Error('naive-sse-server needs --data-dir');
const store = openStore({ dataDir: values['data-dir'], readOnly: true });
const changes = store.processor(values.instance!).changes;
const log = { changes, epoch: store.epoch, chainId: store.chainId ?? 0, instance: values.instance! };
const streams = new Set<ServerResponse>();
let position = changeHead(changes);

function poll(): void {
  store.env.resetReadTxn();
  for (const change of readChanges(log, position, 512)) {
    const envelope: unknown = JSON.parse(change.json.toString('utf8'));
    for (const res of streams) res.write(`id: ${change.cursor}\nevent: ${change.operation}\ndata: ${JSON.stringify(envelope)}\n\n`);
    position = change.sequence;
  }
}

const server = createServer((req, res) => {
  if (!req.url?.startsWith(`/v1/processors/${values.instance}/stream`)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write('event: hello\ndata: {}\n\n');
  streams.add(res);
  res.on('close', () => streams.delete(res));
});
const timer = setInterval(poll, Number(values['poll-ms']));
listenAndAnnounce(server, () => {
  clearInterval(timer);
  return store.close();
});
