/**
 * `node newheads-fanout.js --ws URL --data-dir D --clients N --duration S`: N WebSocket clients (the
 * `ws` package) each subscribed to `newHeads`, in this one process. Commit time is observed by
 * polling the node's LMDB (read-only) for a new canonical head every millisecond; each notification's
 * latency is its arrival minus the first sighting of that block's commit. Prints one JSON line:
 * clients, blocks, notifications (≈ blocks × clients when none is lost) and latency percentiles (ms).
 */
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { openStore } from '../../store/store.js';
import { bytesToHex } from '../../net/eth/hex.js';
import { percentile } from '../stats.js';

const { values } = parseArgs({ options: { ws: { type: 'string' }, 'data-dir': { type: 'string' }, clients: { type: 'string', default: '1000' }, duration: { type: 'string', default: '10' } } });
if (!values.ws || !values['data-dir']) throw new Error('newheads-fanout needs --ws and --data-dir');
const clients = Number(values.clients);
const store = openStore({ dataDir: values['data-dir'], readOnly: true });
const committedAt = new Map<string, number>();

function pollHead(): void {
  for (const value of store.chain.canonical.getRange({ reverse: true, limit: 1 }).map(({ value }) => value)) {
    const hash = bytesToHex(value);
    if (!committedAt.has(hash)) committedAt.set(hash, performance.now());
  }
}

const sockets: WebSocket[] = [];
const latencies: number[] = [];
const hashesSeen = new Set<string>();
let measuring = false;

async function connect(): Promise<void> {
  const socket = new WebSocket(values.ws!);
  sockets.push(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => socket.send('{"jsonrpc":"2.0","id":1,"method":"eth_subscribe","params":["newHeads"]}'));
    socket.once('error', reject);
    socket.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      if (!text.includes('eth_subscription')) {
        resolve();
        return;
      }
      if (!measuring) return;
      const arrived = performance.now();
      const hash = /"hash":"(0x[0-9a-f]{64})"/.exec(text)?.[1];
      if (!hash) return;
      if (!committedAt.has(hash)) pollHead();
      hashesSeen.add(hash);
      latencies.push(Math.max(0, arrived - (committedAt.get(hash) ?? arrived)));
    });
  });
}

for (let i = 0; i < clients; i += 50) await Promise.all(Array.from({ length: Math.min(50, clients - i) }, connect));
const poller = setInterval(pollHead, 1);
pollHead();
measuring = true;
await new Promise((resolve) => setTimeout(resolve, Number(values.duration) * 1000));
measuring = false;
clearInterval(poller);
for (const socket of sockets) socket.terminate();
await store.close();
latencies.sort((a, b) => a - b);
const blocks = hashesSeen.size;
process.stdout.write(`${JSON.stringify({
  clients, blocks, notifications: latencies.length,
  p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), maxMs: latencies.at(-1) ?? 0,
})}\n`);
