/**
 * discv5 (@chainsafe/discv5 11.0.0) for the peer lane: a node record with the node key, bound to one UDP address,
 * seeded with bootnode records; every node it learns of (lookups, its table) that announces an IPv4 address and a
 * TCP port is handed to `onNode` as an RLPx dial candidate. Lookups run every `lookupIntervalMs`.
 */
import type { EventEmitter } from 'node:events';
import { Discv5 } from '@chainsafe/discv5';
import { ENR, SignableENR } from '@chainsafe/enr';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import { multiaddr } from '@multiformats/multiaddr';
import { secp256k1 } from '@noble/curves/secp256k1.js';

export interface DiscoveredNode {
  /** 64-byte uncompressed public key without 0x04: the RLPx node id. */
  readonly publicKey: Uint8Array;
  readonly ip: string;
  readonly tcp: number;
  readonly udp: number;
}

export interface Discv5Options {
  readonly privateKey: Uint8Array;
  readonly host: string;
  readonly udpPort: number;
  /** The RLPx TCP port announced in the record (0: none: the node accepts no inbound sessions). */
  readonly tcpPort: number;
  readonly bootnodes: readonly string[];
  /** The IPv4 address the record announces (`sources.live.nat` extip, or the address a NAT mapping learned); absent: `host`. */
  readonly announceIp?: string | null;
  /** The UDP and TCP ports the record announces when a NAT mapping maps them to other external ports; absent: the bound ones. */
  readonly announcePorts?: { readonly udp: number; readonly tcp: number } | null;
  readonly lookupIntervalMs: number;
  readonly lookupTimeoutMs: number;
  readonly onNode: (node: DiscoveredNode) => void;
  readonly onError: (error: Error) => void;
  /** Extra entries of this node's record (e.g. the consensus layer's `eth2` fork id). */
  readonly recordEntries?: ReadonlyMap<string, Uint8Array>;
  /** Every record discovery learns of, whole (the consensus layer reads its `eth2` entry). */
  readonly onRecord?: (enr: ENR) => void;
}

export interface Discv5Service {
  /** This node's record (`enr:…`). */
  readonly enr: string;
  lookup(): Promise<number>;
  /** Announces another address and ports in the record from now on (a new sequence number, signed again). */
  announce(ip: string, udpPort: number, tcpPort: number): void;
  stop(): Promise<void>;
}

function toNode(enr: ENR): DiscoveredNode | null {
  const { ip, tcp, udp } = enr;
  if (ip === undefined || tcp === undefined) return null;
  const publicKey = secp256k1.Point.fromBytes(enr.publicKey).toBytes(false).subarray(1);
  return { publicKey, ip, tcp, udp: udp ?? tcp };
}

export async function startDiscv5(options: Discv5Options): Promise<Discv5Service> {
  const record = SignableENR.createV4(options.privateKey);
  const announced = options.announcePorts ?? { udp: options.udpPort, tcp: options.tcpPort };
  record.ip = options.announceIp ?? options.host;
  record.udp = announced.udp;
  if (announced.tcp > 0) record.tcp = announced.tcp;
  for (const [key, value] of options.recordEntries ?? []) record.set(key, value);
  const service = Discv5.create({
    enr: record,
    privateKey: privateKeyFromRaw(options.privateKey) as unknown as Parameters<typeof Discv5.create>[0]['privateKey'],
    bindAddrs: { ip4: multiaddr(`/ip4/${options.host}/udp/${options.udpPort}`) },
    config: { lookupTimeout: options.lookupTimeoutMs },
  });
  const seen = (enr: ENR) => {
    options.onRecord?.(enr);
    const node = toNode(enr);
    if (node) options.onNode(node);
  };
  const events = service as unknown as EventEmitter;
  events.on('discovered', seen);
  events.on('enrAdded', seen);
  for (const bootnode of options.bootnodes) service.addEnr(bootnode);
  await service.start();
  const lookup = async () => {
    const found = await service.findRandomNode();
    for (const enr of found) seen(enr);
    for (const enr of service.kadValues()) seen(enr);
    return found.length;
  };
  const timer = setInterval(() => lookup().catch(options.onError), options.lookupIntervalMs);
  void lookup().catch(options.onError);
  return {
    get enr() {
      return service.enr.encodeTxt();
    },
    lookup,
    announce(ip, udpPort, tcpPort) {
      const enr = service.enr;
      if (enr.ip !== ip) enr.ip = ip;
      if (enr.udp !== udpPort) enr.udp = udpPort;
      if (tcpPort > 0 && enr.tcp !== tcpPort) enr.tcp = tcpPort;
    },
    async stop() {
      clearInterval(timer);
      await service.stop();
    },
  };
}
