/**
 * The devnet on the wire: serves a chain reader as an RLPx/`eth` peer (eth/69 and eth/68) on loopback, so a node
 * with `[sources.live] kind = "p2p"` follows the devnet with no network at all. The node key is derived from the
 * devnet seed (the devnet is a pure function of its seed), so the enode URL is stable and can be written into the
 * follower's `trusted_peers`. Every new head is announced to eth/69 sessions with BlockRangeUpdate.
 */
import { keccak256 } from '../eth/keccak.js';
import type { BlockPosition } from '../eth/fork-schedule.js';
import type { Hash } from '../eth/hex.js';
import { formatEnode } from '../p2p/enode.js';
import { EthHost } from '../p2p/host.js';
import { chainRequestHandler, type ChainReader } from '../p2p/serve.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../p2p/status.js';

export interface DevnetPeerOptions {
  readonly seed: string;
  readonly chain: ChainIdentity;
  readonly reader: ChainReader;
  /** The devnet's current head. */
  readonly head: () => BlockPosition & { readonly hash: Hash };
  readonly host: string;
  readonly port: number;
  readonly maxPeers?: number;
}

export interface DevnetPeer {
  readonly enode: string;
  /** Tells connected eth/69 peers the served range moved. */
  announce(head: { readonly number: number; readonly hash: Hash }): void;
  readonly sessions: () => number;
  close(): void;
}

/** The devnet peer's secp256k1 key: keccak256 of the seed under a fixed label (never a real network's key). */
export function devnetPeerKey(seed: string): Uint8Array {
  return keccak256(new TextEncoder().encode(`chain-data-node devnet p2p key:${seed}`));
}

export async function startDevnetPeer(options: DevnetPeerOptions): Promise<DevnetPeer> {
  const host = new EthHost({
    privateKey: devnetPeerKey(options.seed),
    status: () => localStatus(options.chain, { ...options.head(), earliest: 0 }),
    checkStatus: (remote) => refuseStatus(options.chain, options.head(), remote),
    handler: chainRequestHandler(options.reader),
    maxPeers: options.maxPeers ?? 25,
    handshakeTimeoutMs: 10_000,
    listen: { host: options.host, port: options.port },
    clientId: 'chain-data-node-devnet/v0.1.0',
  });
  host.on('error', () => undefined);
  const port = await host.port();
  return {
    enode: formatEnode(host.id, options.host, port),
    announce: (head) => host.broadcastRange({ earliest: 0, latest: head.number, latestHash: head.hash }),
    sessions: () => host.sessionCount,
    close: () => host.destroy(),
  };
}
