/** RLPx hosts on loopback for the p2p tests: a peer serving a chain through a ChainReader, and a client to dial it. */
import { once } from 'node:events';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { formatEnode, parseEnode } from '../../../net/p2p/enode.js';
import { EthHost } from '../../../net/p2p/host.js';
import { chainRequestHandler, type ChainReader } from '../../../net/p2p/serve.js';
import type { EthSession } from '../../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../../net/p2p/status.js';
import type { RawBlock } from './hive-chain.js';

const hosts: EthHost[] = [];

/** The host made last (e.g. the serving peer of the last `servingPeer`). */
export function newestHost(): EthHost {
  return hosts[hosts.length - 1]!;
}

/** Destroys every host made here (call from `after`). */
export function destroyHosts(): void {
  for (const host of hosts.splice(0)) host.destroy();
}

/** A peer serving `reader`, announcing `blocks`' last as its head (eth/69: the range 0..last). */
export async function servingPeer(chain: ChainIdentity, reader: ChainReader, blocks: readonly RawBlock[], versions?: (68 | 69)[]): Promise<string> {
  const last = blocks[blocks.length - 1]!;
  const host = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(),
    status: () => localStatus(chain, { number: last.number, hash: last.hash, timestamp: Number.MAX_SAFE_INTEGER, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote),
    handler: chainRequestHandler(reader), maxPeers: 8, handshakeTimeoutMs: 5000, listen: { host: '127.0.0.1', port: 0 }, ...(versions ? { versions } : {}),
  });
  hosts.push(host);
  return formatEnode(host.id, '127.0.0.1', await host.port());
}

/** A client host at genesis that serves nothing. */
export function client(chain: ChainIdentity, versions?: (68 | 69)[]): EthHost {
  const host = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote),
    handler: null, maxPeers: 8, handshakeTimeoutMs: 5000, listen: null, ...(versions ? { versions } : {}),
  });
  hosts.push(host);
  return host;
}

export async function connect(host: EthHost, enode: string): Promise<EthSession> {
  const established = once(host, 'session') as Promise<[EthSession]>;
  await host.dial(parseEnode(enode));
  return (await established)[0];
}
