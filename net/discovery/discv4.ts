/**
 * discv4 (EIP-8 node discovery, the protocol mainnet and hive bootnodes speak) on @ethereumjs/devp2p's DPT: a
 * Kademlia table bound to one UDP address with the node key, seeded with bootnodes (enode URLs with a UDP port);
 * every node that answers a ping and announces a TCP port is handed to `onNode` as an RLPx dial candidate, and the
 * table is refreshed (FINDNODE toward random targets) every `refreshIntervalMs`; while the table is empty (no
 * bootnode answered yet) the bootnodes are pinged again at that pace. devp2p bans a node that missed a ping for five
 * minutes, which would leave a node whose bootnodes were down at start without peers that long: a bootnode retried
 * on purpose is lifted from that ban first.
 *
 * The peer lane runs it when `sources.live.discovery_port` is not 0 (actors/peers/network.ts), seeded with
 * `sources.live.discv4_bootnodes`; the nodes it finds are dialled with origin `discv4_or_5`.
 */
import { DPT, type PeerInfo } from '@ethereumjs/devp2p';
import { bytesToHex } from '../eth/hex.js';
import type { Enode } from '../p2p/enode.js';
import type { DiscoveredNode } from './discv5.js';

export interface Discv4Options {
  readonly privateKey: Uint8Array;
  readonly host: string;
  /**
   * UDP port to bind. 0 binds any free one (`port` tells which) but pings still announce 0, so third-party nodes
   * (e.g. @ethereumjs/client) cannot ping back and never put this node in their tables: the node passes a fixed port.
   */
  readonly udpPort: number;
  /** The RLPx TCP port announced in pings (0: none: the node accepts no inbound sessions). */
  readonly tcpPort: number;
  /** The IPv4 address announced in pings (`sources.live.nat` extip, or the address a NAT mapping learned); absent: `host`. */
  readonly announceIp?: string | null;
  /** The UDP and TCP ports announced in pings when a NAT mapping maps them to other external ports; absent: the bound ones. */
  readonly announcePorts?: { readonly udp: number; readonly tcp: number } | null;
  readonly bootnodes: readonly Enode[];
  readonly refreshIntervalMs: number;
  readonly timeoutMs: number;
  readonly onNode: (node: DiscoveredNode) => void;
  readonly onError: (error: Error) => void;
}

export interface Discv4Service {
  /** The bound UDP port. */
  readonly port: number;
  /** Nodes currently in the table. */
  tableSize(): number;
  /** Pings the bootnodes again and asks each for its neighbours. */
  bootstrap(): Promise<void>;
  /** Announces another address and ports in the pings from now on (a NAT mapping learned or changed them). */
  announce(ip: string, udpPort: number, tcpPort: number): void;
  stop(): void;
}

export async function startDiscv4(options: Discv4Options): Promise<Discv4Service> {
  const announced = options.announcePorts ?? { udp: options.udpPort, tcp: options.tcpPort };
  const dpt = new DPT(options.privateKey, {
    endpoint: { address: options.announceIp ?? options.host, udpPort: announced.udp, tcpPort: announced.tcp > 0 ? announced.tcp : null },
    refreshInterval: options.refreshIntervalMs,
    timeout: options.timeoutMs,
    shouldFindNeighbours: true,
    shouldGetDnsPeers: false,
  });
  const handOver = (peer: PeerInfo) => {
    if (!peer.id || !peer.address || !peer.tcpPort) return;
    options.onNode({ publicKey: peer.id, ip: peer.address, tcp: peer.tcpPort, udp: peer.udpPort ?? peer.tcpPort });
  };
  dpt.events.on('peer:added', handOver);
  dpt.events.on('error', (error: Error) => options.onError(error));
  const socket = (dpt as unknown as { _server: { _socket: import('node:dgram').Socket } })._server._socket;
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.once('listening', () => {
        socket.off('error', reject);
        resolve();
      });
      dpt.bind(options.udpPort, options.host);
    });
  } catch (error) {
    // The DPT's refresh timer runs from its constructor: stop it with the table (the socket never bound).
    try {
      dpt.destroy();
    } catch {
      // the unbound socket may refuse to close
    }
    throw error;
  }
  const port = socket.address().port;
  const bootstrap = async () => {
    await Promise.all(options.bootnodes.map((enode) => {
      unban(dpt, enode);
      return dpt.bootstrap({ id: enode.id, address: enode.host, udpPort: enode.udpPort, tcpPort: enode.tcpPort });
    }));
  };
  await bootstrap();
  const retry = setInterval(() => {
    if (dpt.getPeers().length === 0) void bootstrap();
  }, options.refreshIntervalMs);
  retry.unref();
  return {
    port,
    tableSize: () => dpt.getPeers().length,
    bootstrap,
    announce: (ip, udpPort, tcpPort) => {
      // devp2p 10.0.0 takes the endpoint its pings carry once, at construction, and keeps it in the server's `_endpoint`.
      const server = (dpt as unknown as { _server: { _endpoint?: unknown } })._server;
      if (server._endpoint === undefined) throw new Error('@ethereumjs/devp2p DPT without the endpoint this code updates (its internals changed)');
      server._endpoint = { address: ip, udpPort, tcpPort: tcpPort > 0 ? tcpPort : null };
    },
    stop: () => {
      clearInterval(retry);
      dpt.destroy();
    },
  };
}

/**
 * Lifts devp2p's ban of a node (its ban list is keyed, as its k-bucket, by the node id in hex and by
 * `address:tcpPort`; devp2p 10.0.0 exposes no call for it, hence the reach into `_banlist`).
 */
function unban(dpt: DPT, enode: Enode): void {
  const bans = (dpt as unknown as { _banlist?: { _lru?: { delete(key: string): boolean } } })._banlist?._lru;
  if (bans === undefined) throw new Error('@ethereumjs/devp2p DPT without the ban list this code lifts bootnode bans from (its internals changed)');
  bans.delete(bytesToHex(enode.id).slice(2));
  bans.delete(`${enode.host}:${enode.tcpPort}`);
}
