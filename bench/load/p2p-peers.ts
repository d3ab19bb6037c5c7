/**
 * The serving side of the p2p workload, in its own process so that its CPU is measured (and profiled) apart from
 * the follower's: `node p2p-peers.js <peers> <smoke 0|1>` loads the bench chain, starts `<peers>` RLPx/eth hosts on
 * 127.0.0.1 serving it, and prints `{"enodes":[…]}` on one line. Then, on standard input: `start` marks the CPU
 * counter, `stop` prints `{"cpuUs":…}` (user + system microseconds since `start`) and exits.
 */
import { createInterface } from 'node:readline';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { formatEnode } from '../../net/p2p/enode.js';
import { EthHost } from '../../net/p2p/host.js';
import { chainRequestHandler } from '../../net/p2p/serve.js';
import { localStatus, refuseStatus } from '../../net/p2p/status.js';
import { loadChain, readerOf } from '../workloads/p2p-chain.js';

const peers = Number(process.argv[2] ?? '1');
const smoke = process.argv[3] === '1';
const { chain, blocks } = await loadChain(smoke);
const reader = readerOf(blocks);
const tip = blocks[blocks.length - 1]!;
const hosts: EthHost[] = [];
const enodes: string[] = [];
for (let i = 0; i < peers; i++) {
  const host = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: tip.number, hash: tip.hash, timestamp: tip.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, tip, remote), handler: chainRequestHandler(reader), maxPeers: 4, handshakeTimeoutMs: 10_000, listen: { host: '127.0.0.1', port: 0 },
  });
  hosts.push(host);
  enodes.push(formatEnode(host.id, '127.0.0.1', await host.port()));
}
process.stdout.write(`${JSON.stringify({ enodes })}\n`);
let mark = process.cpuUsage();
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'start') mark = process.cpuUsage();
  if (line === 'stop') {
    const used = process.cpuUsage(mark);
    for (const host of hosts) host.destroy();
    process.stdout.write(`${JSON.stringify({ cpuUs: used.user + used.system })}\n`, () => process.exit(0));
    break;
  }
}
