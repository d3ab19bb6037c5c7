/**
 * The devnet on the wire: serves a chain reader as an RLPx/`eth` peer (eth/69 and eth/68) on loopback, so a node
 * with `[sources.live] kind = "p2p"` follows the devnet with no network at all. The node key is derived from the
 * devnet seed (the devnet is a pure function of its seed), so the enode URL is stable and can be written into the
 * follower's `trusted_peers`. Every new head is announced to eth/69 sessions with BlockRangeUpdate. It also answers
 * discv4 on the same port (UDP), as geth does, so a follower can take its enode URL as a `discv4_bootnodes` entry
 * and find it by discovery; when that UDP port is taken it serves RLPx without discv4.
 */
import { keccak256 } from '../eth/keccak.js';
import type { BlockPosition } from '../eth/fork-schedule.js';
import type { Hash } from '../eth/hex.js';
import { formatEnode } from '../p2p/enode.js';
import { startDiscv4, type Discv4Service } from '../discovery/discv4.js';
import { EthHost } from '../p2p/host.js';
import { chainRequestHandler, type ChainReader } from '../p2p/serve.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../p2p/status.js';
import type { BlockRef } from '../../store/chain-types.js';

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
  /** The UDP port discv4 answers on (the RLPx port), or null when it could not bind it. */
  readonly discv4Port: number | null;
  /** Tells connected eth/69 peers the served range moved. */
  announce(head: BlockRef): void;
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
  let discv4: Discv4Service | null = null;
  try {
    discv4 = await startDiscv4({
      privateKey: devnetPeerKey(options.seed), host: options.host, udpPort: port, tcpPort: port, bootnodes: [],
      refreshIntervalMs: 60_000, timeoutMs: 5_000, onNode: () => undefined, onError: () => undefined,
    });
  } catch {
    discv4 = null;
  }
  return {
    enode: formatEnode(host.id, options.host, port),
    discv4Port: discv4?.port ?? null,
    announce: (head) => host.broadcastRange({ earliest: 0, latest: head.number, latestHash: head.hash }),
    sessions: () => host.sessionCount,
    close: () => {
      discv4?.stop();
      host.destroy();
    },
  };
}
