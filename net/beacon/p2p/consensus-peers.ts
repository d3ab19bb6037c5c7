/**
 * The consensus-layer network of the `consensus_p2p` finality backend: a libp2p host (./host.ts), discv5 (the node's
 * own net/discovery/discv5.ts, its record carrying this node's `eth2` fork id) seeded with bootnodes, and dials to
 * discovered nodes whose `eth2` entry names the chain's current fork digest (others are another network or fork and
 * are never dialed). Each connected peer is one light-client transport (./light-client-requests.ts) in the live
 * `clients` list; the light-client finality and optimistic update gossip topics of the current digest are
 * subscribed, and each message is decoded, checked by `validate` (reject: not forwarded, never believed) and handed
 * to `onGossip`.
 */
import { ENR } from '@chainsafe/enr';
import type { Message, PeerId } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import { startDiscv5, type Discv5Service } from '../../discovery/discv5.js';
import { freeUdpPort } from '../../discovery/udp-port.js';
import type { BeaconClient } from '../api-client.js';
import { currentSlot, epochAtSlot, type BeaconChainConfig, type ForkName } from '../config.js';
import { digestEpochs, digestForks, digestOfEnrForkId, enrForkId, forkDigest, type BlobSchedule } from './fork-digest.js';
import { createConsensusHost, gossipTopic, type ConsensusHost } from './host.js';
import { peerBeaconClient } from './light-client-requests.js';
import { sszToJson } from './light-client-ssz.js';
import { ATTESTATION_SUBNET_COUNT, CUSTODY_REQUIREMENT, GOODBYE, startPeerProtocols, SYNC_COMMITTEE_SUBNET_COUNT, type LocalChainStatus, type PeerProtocols } from './peer-protocols.js';

export type GossipName = 'light_client_finality_update' | 'light_client_optimistic_update';
export type GossipVerdict = 'accept' | 'ignore' | 'reject';

export interface ConsensusPeersOptions {
  /** 32-byte secp256k1 key of this node (libp2p identity and discv5 record). */
  readonly privateKey: Uint8Array;
  readonly host: string;
  /** libp2p TCP port (0: a free one). */
  readonly tcpPort: number;
  /** discv5 UDP port (0: a free one). */
  readonly udpPort: number;
  readonly bootnodes: readonly string[];
  readonly config: BeaconChainConfig;
  readonly schedule: BlobSchedule;
  readonly checkpointSlot: number;
  readonly requestTimeoutMs: number;
  readonly lookupIntervalMs: number;
  readonly maxPeers: number;
  /** The chain as the light client knows it (its verified store), for the Status handshake. */
  readonly chain: () => LocalChainStatus;
  /** Ping interval to each connected peer (default 15 s). */
  readonly pingIntervalMs?: number;
  readonly now?: () => number;
  /** Decides a gossip message before it is forwarded or handed on (runs the light client's checks). */
  readonly validate: (name: GossipName, json: { version: string; data: unknown }) => GossipVerdict;
  readonly onGossip: (name: GossipName, json: { version: string; data: unknown }) => void;
  readonly onPeers?: (connected: number) => void;
  readonly log: { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
}

export interface ConsensusPeers {
  /** One transport per connected peer; the array is updated in place as peers come and go. */
  readonly clients: BeaconClient[];
  readonly enr: string;
  readonly peerId: string;
  readonly tcpPort: number;
  readonly udpPort: number;
  /** Status, MetaData, Ping and Goodbye with every connected peer (./peer-protocols.ts). */
  readonly protocols: PeerProtocols;
  connected(): number;
  stop(): Promise<void>;
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');
const MAX_CANDIDATES = 1000;
const GOSSIP: readonly GossipName[] = ['light_client_finality_update', 'light_client_optimistic_update'];
const KIND = new Map<GossipName, 'finality_update' | 'optimistic_update'>([['light_client_finality_update', 'finality_update'], ['light_client_optimistic_update', 'optimistic_update']]);

/** A Uint64 big-endian without leading zero bytes (0: the empty string), as the ENR `cgc` entry takes it. */
function bigEndianMinimal(value: bigint): Uint8Array {
  const bytes: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 0xffn));
  return Uint8Array.from(bytes);
}

/**
 * The node record's consensus entries: `eth2` (ENRForkID), `attnets` and (from Altair) `syncnets` as the MetaData
 * announces them (no subnet), and once Fulu is scheduled `cgc` (the custody group count, big-endian without leading
 * zeros) and `nfd` (the next fork digest, zeros when none is scheduled).
 */
export function recordEntries(config: BeaconChainConfig, schedule: BlobSchedule, epoch: number): Map<string, Uint8Array> {
  const entries = new Map<string, Uint8Array>([['eth2', enrForkId(config, schedule, epoch)], ['attnets', new Uint8Array(ATTESTATION_SUBNET_COUNT / 8)]]);
  if (config.forks.some((f) => f.name === 'altair' && Number.isFinite(f.epoch))) entries.set('syncnets', new Uint8Array(Math.ceil(SYNC_COMMITTEE_SUBNET_COUNT / 8)));
  if (config.forks.some((f) => f.name === 'fulu' && Number.isFinite(f.epoch))) {
    entries.set('cgc', bigEndianMinimal(CUSTODY_REQUIREMENT));
    const next = digestEpochs(config, schedule).find((e) => e > epoch);
    entries.set('nfd', next === undefined ? new Uint8Array(4) : forkDigest(config, schedule, next));
  }
  return entries;
}


export async function startConsensusPeers(options: ConsensusPeersOptions): Promise<ConsensusPeers> {
  const { config, schedule } = options;
  const now = options.now ?? Date.now;
  const epochNow = () => epochAtSlot(config, currentSlot(config, now()));
  const digests: ReadonlyMap<string, ForkName> = digestForks(config, schedule);
  const host: ConsensusHost = await createConsensusHost({ privateKey: options.privateKey, host: options.host, port: options.tcpPort });
  const clients: BeaconClient[] = [];
  const byPeer = new Map<string, BeaconClient>();
  let stopping = false;

  const addPeer = (peer: PeerId) => {
    const id = peer.toString();
    if (byPeer.has(id)) return;
    const client = peerBeaconClient({ host, peer, config, digests, timeoutMs: options.requestTimeoutMs, checkpointSlot: options.checkpointSlot });
    byPeer.set(id, client);
    clients.push(client);
    options.log.info('consensus peer connected', { peer: id, peers: byPeer.size });
    options.onPeers?.(byPeer.size);
  };
  const removePeer = (peer: PeerId) => {
    const id = peer.toString();
    const client = byPeer.get(id);
    if (!client) return;
    byPeer.delete(id);
    clients.splice(clients.indexOf(client), 1);
    if (!stopping) options.log.warn('consensus peer disconnected', { peer: id, peers: byPeer.size });
    options.onPeers?.(byPeer.size);
  };
  host.addEventListener('peer:disconnect', (event) => removePeer(event.detail));
  // A peer becomes a light-client transport once its Status handshake shows it on this chain and fork.
  const candidates = new Map<string, { address: string; failures: number; nextAt: number }>();
  const protocols = await startPeerProtocols({
    host, config, schedule, now, chain: options.chain, requestTimeoutMs: options.requestTimeoutMs, pingIntervalMs: options.pingIntervalMs ?? 15_000, log: options.log,
    onReady: (peer) => addPeer(peer),
    onGoodbye: (peer, reason) => {
      removePeer(peer);
      // Not dialed again soon: a peer that left or is on another network (a shutdown one may come back).
      const candidate = candidates.get(peer.toString());
      if (candidate) candidate.nextAt = now() + (reason === GOODBYE.irrelevantNetwork ? 3_600_000 : 60_000);
    },
  });

  // Gossip: the topics of the current digest (re-subscribed when a fork or BPO fork changes it).
  const pubsub = host.services.pubsub;
  let subscribedDigest = '';
  const topicNames = new Map<string, GossipName>();
  const decode = (name: GossipName, topic: string, data: Uint8Array) => {
    const digest = topic.split('/')[2] ?? '';
    const fork = digests.get(digest);
    if (fork === undefined) throw new Error(`topic digest ${digest} is no fork digest of ${config.name}`);
    return sszToJson(config, fork, KIND.get(name)!, data);
  };
  const subscribe = () => {
    const digest = forkDigest(config, schedule, epochNow());
    if (hex(digest) === subscribedDigest) return;
    for (const topic of topicNames.keys()) {
      pubsub.unsubscribe(topic);
      pubsub.topicValidators.delete(topic);
    }
    topicNames.clear();
    subscribedDigest = hex(digest);
    for (const name of GOSSIP) {
      const topic = gossipTopic(digest, name);
      topicNames.set(topic, name);
      pubsub.topicValidators.set(topic, (_peer: PeerId, message: Message) => {
        try {
          return options.validate(name, decode(name, message.topic, message.data)) as never;
        } catch {
          return 'reject' as never;
        }
      });
      pubsub.subscribe(topic);
    }
    options.log.info('consensus gossip subscribed', { digest: subscribedDigest, topics: [...topicNames.keys()].join(',') });
  };
  pubsub.addEventListener('message', (event) => {
    const message = event.detail;
    const name = topicNames.get(message.topic);
    if (!name) return;
    try {
      options.onGossip(name, decode(name, message.topic, message.data));
    } catch (error) {
      options.log.warn('a gossip message did not decode', { topic: message.topic, reason: (error as Error).message });
    }
  });

  await host.start();
  subscribe();
  const tcpPort = Number(host.getMultiaddrs()[0]?.toOptions().port ?? options.tcpPort);
  const udpPort = options.udpPort === 0 ? await freeUdpPort(options.host) : options.udpPort;

  // Discovery: dial nodes of this chain and fork.
  const consider = (enr: ENR) => {
    const eth2 = enr.kvs.get('eth2');
    const digest = eth2 ? digestOfEnrForkId(eth2) : null;
    if (!digest || hex(digest) !== subscribedDigest) return;
    const location = enr.getLocationMultiaddr('tcp');
    if (!location) return;
    const id = enr.peerId.toString();
    if (id === host.peerId.toString() || candidates.has(id)) return;
    // Bounded: the oldest candidate that is not connected makes room.
    if (candidates.size >= MAX_CANDIDATES) {
      const idle = [...candidates.keys()].find((known) => !byPeer.has(known));
      if (idle === undefined) return;
      candidates.delete(idle);
    }
    candidates.set(id, { address: `${location.toString()}/p2p/${id}`, failures: 0, nextAt: 0 });
    void dialSome();
  };
  let dialing = false;
  let retry: NodeJS.Timeout | null = null;
  /** A candidate that failed is tried again when its backoff ends (not only at the next lookup). */
  const scheduleRetry = () => {
    if (stopping || retry || byPeer.size >= options.maxPeers) return;
    const waiting = [...candidates].filter(([id]) => !byPeer.has(id)).map(([, c]) => c.nextAt);
    if (waiting.length === 0) return;
    retry = setTimeout(() => { retry = null; void dialSome(); }, Math.max(0, Math.min(...waiting) - now()) + 10);
    retry.unref();
  };
  async function dialSome(): Promise<void> {
    if (dialing || stopping) return;
    dialing = true;
    try {
      for (const [id, candidate] of candidates) {
        if (stopping || byPeer.size >= options.maxPeers) break;
        if (byPeer.has(id) || candidate.nextAt > now()) continue;
        try {
          await host.dial(multiaddr(candidate.address), { signal: AbortSignal.timeout(options.requestTimeoutMs) });
          candidate.failures = 0;
        } catch (error) {
          candidate.failures += 1;
          candidate.nextAt = now() + Math.min(300_000, 250 * 2 ** Math.min(candidate.failures, 10));
          if (candidate.failures === 1) options.log.warn('consensus peer dial failed', { peer: id, reason: (error as Error).message });
        }
      }
    } finally {
      dialing = false;
      scheduleRetry();
    }
  }

  const discovery: Discv5Service = await startDiscv5({
    privateKey: options.privateKey, host: options.host, udpPort, tcpPort, bootnodes: options.bootnodes,
    recordEntries: recordEntries(config, schedule, epochNow()),
    lookupIntervalMs: options.lookupIntervalMs, lookupTimeoutMs: Math.min(options.lookupIntervalMs, 10_000),
    onNode: () => undefined,
    onRecord: consider,
    onError: (error) => options.log.warn('consensus discovery lookup failed', { reason: error.message }),
  });
  // The bootnodes' own records are candidates at once (a bootnode is often a serving peer itself).
  for (const bootnode of options.bootnodes) {
    try {
      consider(ENR.decodeTxt(bootnode));
    } catch (error) {
      options.log.warn('a bootnode record does not decode', { bootnode: bootnode.slice(0, 24), reason: (error as Error).message });
    }
  }
  const timer = setInterval(() => {
    subscribe();
    void dialSome();
  }, options.lookupIntervalMs);
  options.log.info('consensus p2p started', { peerId: host.peerId.toString(), tcp: tcpPort, udp: udpPort, enr: discovery.enr, digest: subscribedDigest, bootnodes: options.bootnodes.length });

  return {
    clients,
    enr: discovery.enr,
    peerId: host.peerId.toString(),
    tcpPort,
    udpPort,
    protocols,
    connected: () => byPeer.size,
    async stop() {
      stopping = true;
      clearInterval(timer);
      if (retry) clearTimeout(retry);
      await protocols.stop();
      await discovery.stop();
      await host.stop();
    },
  };
}
