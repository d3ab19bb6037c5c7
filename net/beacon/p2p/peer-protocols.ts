/**
 * The consensus p2p Req/Resp protocols every peer expects besides the data it asks for (consensus-specs phase0
 * `p2p-interface.md` "Status v1", "Goodbye v1", "Ping v1", "GetMetaData v1"; altair "GetMetaData v2" (syncnets);
 * fulu "Status v2" (earliest_available_slot) and "GetMetaData v3" (custody_group_count)), in the `ssz_snappy`
 * encoding of ./req-resp.ts. None of their responses has context bytes.
 *
 * `startPeerProtocols` serves all of them on a libp2p host and drives them towards every connected peer: a Status
 * request on connection (the version the current fork requires, falling back to the other when the peer does not speak
 * it), the peer's Status checked against the local one (another fork digest, or another finalized root at the same
 * finalized epoch, is "irrelevant network": Goodbye 2 and the connection closed), a MetaData request after the
 * handshake and whenever a Ping answer carries a sequence number other than the one recorded, a Ping to every peer
 * at an interval (a peer that misses `maxPingFailures` in a row gets Goodbye 3), and Goodbye 1 to every peer on stop.
 * A peer's Goodbye is answered and its connection closed. A peer counts as ready (`onReady`) once its Status passed.
 */
import type { PeerId } from '@libp2p/interface';
import { BitVectorType, ByteVectorType, ContainerType, UintBigintType } from '@chainsafe/ssz';
import { currentSlot, epochAtSlot, isForkActive, type BeaconChainConfig } from '../config.js';
import { BeaconBlockHeader } from '../ssz.js';
import type { LightClientStore } from '../sync-protocol.js';
import { forkDigest, type BlobSchedule } from './fork-digest.js';
import type { ConsensusHost } from './host.js';
import { decodeRequest, encodeErrorChunk, encodePayload, encodeSuccessChunk, exchange, PROTOCOL_PREFIX, readAll, ReqRespError, RESULT } from './req-resp.js';

const Uint64 = new UintBigintType(8);
const Root = new ByteVectorType(32);
const eth2 = { jsonCase: 'eth2' as const };

export const ATTESTATION_SUBNET_COUNT = 64;
export const SYNC_COMMITTEE_SUBNET_COUNT = 4;
/** Fulu `CUSTODY_REQUIREMENT`: the smallest custody group count a peer may announce without being refused. */
export const CUSTODY_REQUIREMENT = 4n;

export const StatusV1 = new ContainerType({ forkDigest: new ByteVectorType(4), finalizedRoot: Root, finalizedEpoch: Uint64, headRoot: Root, headSlot: Uint64 }, eth2);
export const StatusV2 = new ContainerType({
  forkDigest: new ByteVectorType(4), finalizedRoot: Root, finalizedEpoch: Uint64, headRoot: Root, headSlot: Uint64, earliestAvailableSlot: Uint64,
}, eth2);
export const MetadataV1 = new ContainerType({ seqNumber: Uint64, attnets: new BitVectorType(ATTESTATION_SUBNET_COUNT) }, eth2);
export const MetadataV2 = new ContainerType({ seqNumber: Uint64, attnets: new BitVectorType(ATTESTATION_SUBNET_COUNT), syncnets: new BitVectorType(SYNC_COMMITTEE_SUBNET_COUNT) }, eth2);
export const MetadataV3 = new ContainerType({
  seqNumber: Uint64, attnets: new BitVectorType(ATTESTATION_SUBNET_COUNT), syncnets: new BitVectorType(SYNC_COMMITTEE_SUBNET_COUNT), custodyGroupCount: Uint64,
}, eth2);
/** Ping's and Goodbye's content: a single Uint64 field. */
export const PingOrGoodbye = Uint64;

export const PEER_PROTOCOLS = {
  statusV1: `${PROTOCOL_PREFIX}/status/1/ssz_snappy`,
  statusV2: `${PROTOCOL_PREFIX}/status/2/ssz_snappy`,
  goodbye: `${PROTOCOL_PREFIX}/goodbye/1/ssz_snappy`,
  ping: `${PROTOCOL_PREFIX}/ping/1/ssz_snappy`,
  metadataV1: `${PROTOCOL_PREFIX}/metadata/1/ssz_snappy`,
  metadataV2: `${PROTOCOL_PREFIX}/metadata/2/ssz_snappy`,
  metadataV3: `${PROTOCOL_PREFIX}/metadata/3/ssz_snappy`,
} as const;

/** Goodbye reason codes (phase0): 1 client shut down, 2 irrelevant network, 3 fault/error. */
export const GOODBYE = { clientShutdown: 1n, irrelevantNetwork: 2n, fault: 3n } as const;

/** A Status as both versions carry it (`earliestAvailableSlot` is sent in v2 only; v1 peers' read as null). */
export interface Status {
  readonly forkDigest: Uint8Array;
  readonly finalizedRoot: Uint8Array;
  readonly finalizedEpoch: bigint;
  readonly headRoot: Uint8Array;
  readonly headSlot: bigint;
  readonly earliestAvailableSlot: bigint | null;
}

export interface Metadata {
  readonly seqNumber: bigint;
  readonly attnets: boolean[];
  readonly syncnets: boolean[];
  readonly custodyGroupCount: bigint;
}

/** What the local node knows of its chain (the fork digest is added from the wall clock). */
export interface LocalChainStatus {
  readonly finalizedRoot: Uint8Array;
  readonly finalizedEpoch: number;
  readonly headRoot: Uint8Array;
  readonly headSlot: number;
  /** The earliest slot whose block the node could serve (Status v2). */
  readonly earliestAvailableSlot: number;
}

export type StatusVersion = 1 | 2;
export type MetadataVersion = 1 | 2 | 3;

export function encodeStatus(version: StatusVersion, status: Status): Uint8Array {
  const base = { forkDigest: status.forkDigest, finalizedRoot: status.finalizedRoot, finalizedEpoch: status.finalizedEpoch, headRoot: status.headRoot, headSlot: status.headSlot };
  return version === 2 ? StatusV2.serialize({ ...base, earliestAvailableSlot: status.earliestAvailableSlot ?? status.headSlot }) : StatusV1.serialize(base);
}

export function decodeStatus(version: StatusVersion, ssz: Uint8Array): Status {
  if (version === 2) {
    const v = StatusV2.deserialize(ssz);
    return { forkDigest: v.forkDigest, finalizedRoot: v.finalizedRoot, finalizedEpoch: v.finalizedEpoch, headRoot: v.headRoot, headSlot: v.headSlot, earliestAvailableSlot: v.earliestAvailableSlot };
  }
  const v = StatusV1.deserialize(ssz);
  return { forkDigest: v.forkDigest, finalizedRoot: v.finalizedRoot, finalizedEpoch: v.finalizedEpoch, headRoot: v.headRoot, headSlot: v.headSlot, earliestAvailableSlot: null };
}

const bits = (n: number, from: readonly boolean[]) => {
  const out = new BitVectorType(n).defaultValue();
  from.forEach((bit, i) => { if (i < n) out.set(i, bit); });
  return out;
};
const toBools = (vector: { toBoolArray(): boolean[] }) => vector.toBoolArray();

export function encodeMetadata(version: MetadataVersion, metadata: Metadata): Uint8Array {
  const attnets = bits(ATTESTATION_SUBNET_COUNT, metadata.attnets);
  if (version === 1) return MetadataV1.serialize({ seqNumber: metadata.seqNumber, attnets });
  const syncnets = bits(SYNC_COMMITTEE_SUBNET_COUNT, metadata.syncnets);
  if (version === 2) return MetadataV2.serialize({ seqNumber: metadata.seqNumber, attnets, syncnets });
  return MetadataV3.serialize({ seqNumber: metadata.seqNumber, attnets, syncnets, custodyGroupCount: metadata.custodyGroupCount });
}

/** A MetaData of any version; fields the version lacks read as empty (syncnets) or 0 (custody group count). */
export function decodeMetadata(version: MetadataVersion, ssz: Uint8Array): Metadata {
  if (version === 1) {
    const v = MetadataV1.deserialize(ssz);
    return { seqNumber: v.seqNumber, attnets: toBools(v.attnets), syncnets: [], custodyGroupCount: 0n };
  }
  if (version === 2) {
    const v = MetadataV2.deserialize(ssz);
    return { seqNumber: v.seqNumber, attnets: toBools(v.attnets), syncnets: toBools(v.syncnets), custodyGroupCount: 0n };
  }
  const v = MetadataV3.deserialize(ssz);
  return { seqNumber: v.seqNumber, attnets: toBools(v.attnets), syncnets: toBools(v.syncnets), custodyGroupCount: v.custodyGroupCount };
}

const METADATA_TYPES = new Map<MetadataVersion, { maxSize: number }>([[1, MetadataV1], [2, MetadataV2], [3, MetadataV3]]);
const METADATA_PROTOCOL = new Map<MetadataVersion, string>([[1, PEER_PROTOCOLS.metadataV1], [2, PEER_PROTOCOLS.metadataV2], [3, PEER_PROTOCOLS.metadataV3]]);
const STATUS_PROTOCOL = new Map<StatusVersion, string>([[1, PEER_PROTOCOLS.statusV1], [2, PEER_PROTOCOLS.statusV2]]);
const STATUS_TYPES = new Map<StatusVersion, { fixedSize: number | null; maxSize: number }>([[1, StatusV1], [2, StatusV2]]);

/** The versions the current fork requires: Status v2 and MetaData v3 from Fulu, MetaData v2 from Altair. */
export function versionsAt(config: BeaconChainConfig, epoch: number): { status: StatusVersion; metadata: MetadataVersion } {
  if (isForkActive(config, 'fulu', epoch)) return { status: 2, metadata: 3 };
  return { status: 1, metadata: isForkActive(config, 'altair', epoch) ? 2 : 1 };
}

/** The full local Status: the digest of the wall clock's epoch (not the synced one) and the chain as known. */
export function localStatus(config: BeaconChainConfig, schedule: BlobSchedule, wallEpoch: number, chain: LocalChainStatus): Status {
  return {
    forkDigest: forkDigest(config, schedule, wallEpoch),
    finalizedRoot: chain.finalizedRoot,
    finalizedEpoch: BigInt(chain.finalizedEpoch),
    headRoot: chain.headRoot,
    headSlot: BigInt(chain.headSlot),
    earliestAvailableSlot: BigInt(chain.earliestAvailableSlot),
  };
}

/**
 * The Status the node announces: the verified store's finalized header (its root, and the checkpoint epoch its finality
 * branch proved — else the epoch of its slot, one too low when the epoch's first slot was empty) and its optimistic
 * header as the head; before bootstrap
 * the weak-subjectivity checkpoint itself. A finalized genesis is the zero root (phase0 convention). The node serves
 * no blocks, so its earliest available slot is its head slot.
 */
export function lightClientStatus(config: BeaconChainConfig, store: LightClientStore | null, checkpointRoot: Uint8Array, checkpointSlot: number): LocalChainStatus {
  const finalizedSlot = store ? store.finalizedHeader.beacon.slot : checkpointSlot;
  const finalizedRoot = store ? BeaconBlockHeader.hashTreeRoot(store.finalizedHeader.beacon) : checkpointRoot;
  const headSlot = store ? store.optimisticHeader.beacon.slot : checkpointSlot;
  const headRoot = store ? BeaconBlockHeader.hashTreeRoot(store.optimisticHeader.beacon) : checkpointRoot;
  return {
    finalizedRoot: finalizedSlot === 0 ? new Uint8Array(32) : finalizedRoot, finalizedEpoch: store?.finalizedEpoch ?? epochAtSlot(config, finalizedSlot),
    headRoot, headSlot, earliestAvailableSlot: headSlot,
  };
}

const equalBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);
const hex = (bytes: Uint8Array) => `0x${Buffer.from(bytes).toString('hex')}`;

/**
 * Whether a peer's Status shows it on this network: the same fork digest, and at an equal finalized epoch the same
 * finalized root (the only finalized root a light client knows is its own, so disjoint chains finalized at other
 * epochs are not detected here; epoch 0 is genesis, whose root is the zero root by convention). Null: relevant.
 */
export function irrelevance(local: Status, remote: Status): string | null {
  if (!equalBytes(local.forkDigest, remote.forkDigest)) return `fork digest ${hex(remote.forkDigest)}, not ${hex(local.forkDigest)}`;
  if (remote.finalizedEpoch === local.finalizedEpoch && local.finalizedEpoch > 0n && !equalBytes(local.finalizedRoot, remote.finalizedRoot)) {
    return `finalized root ${hex(remote.finalizedRoot)} at epoch ${remote.finalizedEpoch}, not ${hex(local.finalizedRoot)}`;
  }
  return null;
}

type Stream = {
  source: AsyncIterable<{ subarray(): Uint8Array } | Uint8Array>;
  sink(source: Iterable<Uint8Array>): Promise<void>;
  abort(error: Error): void;
};

const MAX_RESPONSE_BYTES = 4096;

/** One request on a new stream; the single response chunk's SSZ bytes (an error chunk throws). */
export async function requestOne(host: ConsensusHost, peer: PeerId, protocol: string, body: Uint8Array | null, maxSize: number, timeoutMs: number): Promise<Uint8Array> {
  const chunks = await exchange(host, peer, protocol, body ? encodePayload(body) : null, { contextBytes: false, maxSize, maxChunks: 1, maxBytes: MAX_RESPONSE_BYTES, timeoutMs });
  const first = chunks[0];
  if (!first) throw new ReqRespError(`an empty ${protocol} response`);
  if (first.result !== RESULT.success) throw new ReqRespError(`${protocol}: error ${first.result}: ${first.message ?? ''}`);
  return first.payload;
}

export async function requestStatus(host: ConsensusHost, peer: PeerId, version: StatusVersion, ours: Status, timeoutMs: number): Promise<Status> {
  const type = STATUS_TYPES.get(version)!;
  return decodeStatus(version, await requestOne(host, peer, STATUS_PROTOCOL.get(version)!, encodeStatus(version, ours), type.maxSize, timeoutMs));
}

export async function requestPing(host: ConsensusHost, peer: PeerId, seqNumber: bigint, timeoutMs: number): Promise<bigint> {
  return PingOrGoodbye.deserialize(await requestOne(host, peer, PEER_PROTOCOLS.ping, PingOrGoodbye.serialize(seqNumber), 8, timeoutMs));
}

export async function requestMetadata(host: ConsensusHost, peer: PeerId, version: MetadataVersion, timeoutMs: number): Promise<Metadata> {
  return decodeMetadata(version, await requestOne(host, peer, METADATA_PROTOCOL.get(version)!, null, METADATA_TYPES.get(version)!.maxSize, timeoutMs));
}

/** Sends Goodbye; its answer (if any) is read but not required (the peer may close first). */
export async function sendGoodbye(host: ConsensusHost, peer: PeerId, reason: bigint, timeoutMs: number): Promise<void> {
  try {
    await requestOne(host, peer, PEER_PROTOCOLS.goodbye, PingOrGoodbye.serialize(reason), 8, timeoutMs);
  } catch {
    // The peer hung up or did not answer: the goodbye was sent or could not be; the connection closes either way.
  }
}

export interface PeerState {
  status: Status | null;
  metadata: Metadata | null;
  /** The sequence number the peer's last Ping request or answer carried. */
  pingSeq: bigint | null;
  pingFailures: number;
  ready: boolean;
  /** A Goodbye is on its way or arrived: the connection is closing. */
  leaving: boolean;
}

export interface PeerProtocolsOptions {
  readonly host: ConsensusHost;
  readonly config: BeaconChainConfig;
  readonly schedule: BlobSchedule;
  readonly now?: () => number;
  /** The chain as the node knows it now (a light client: its verified store). */
  readonly chain: () => LocalChainStatus;
  readonly requestTimeoutMs: number;
  readonly pingIntervalMs: number;
  readonly maxPingFailures?: number;
  readonly onReady?: (peer: PeerId, status: Status) => void;
  readonly onGoodbye?: (peer: PeerId, reason: bigint, sent: boolean) => void;
  readonly log: { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
}

export interface PeerProtocols {
  readonly peers: ReadonlyMap<string, PeerState>;
  readonly metadata: Metadata;
  status(): Status;
  /** Sends Goodbye with `reason` and closes the connection. */
  disconnect(peer: PeerId, reason: bigint, why: string): Promise<void>;
  /** Goodbye 1 (client shut down) to every connected peer, then the handlers are removed. */
  stop(): Promise<void>;
}

const MAX_REQUEST_BYTES = 256;
const GOODBYE_GRACE_MS = 1000;

export async function startPeerProtocols(options: PeerProtocolsOptions): Promise<PeerProtocols> {
  const { host, config, schedule } = options;
  const now = options.now ?? Date.now;
  const wallEpoch = () => epochAtSlot(config, currentSlot(config, now()));
  const status = () => localStatus(config, schedule, wallEpoch(), options.chain());
  // The node subscribes to no attestation or sync committee subnet and keeps no data columns beyond the minimum it
  // may announce; nothing of it changes while it runs, so its sequence number stays 0.
  const metadata: Metadata = {
    seqNumber: 0n, attnets: new Array<boolean>(ATTESTATION_SUBNET_COUNT).fill(false), syncnets: new Array<boolean>(SYNC_COMMITTEE_SUBNET_COUNT).fill(false),
    custodyGroupCount: CUSTODY_REQUIREMENT,
  };
  const peers = new Map<string, PeerState>();
  const maxPingFailures = options.maxPingFailures ?? 3;
  let stopping = false;
  const state = (peer: PeerId): PeerState => {
    const id = peer.toString();
    let entry = peers.get(id);
    if (!entry) {
      entry = { status: null, metadata: null, pingSeq: null, pingFailures: 0, ready: false, leaving: false };
      peers.set(id, entry);
    }
    return entry;
  };

  async function disconnect(peer: PeerId, reason: bigint, why: string): Promise<void> {
    const entry = peers.get(peer.toString());
    if (entry?.leaving) return;
    if (entry) entry.leaving = true;
    options.log.warn('consensus peer sent goodbye', { peer: peer.toString(), reason: Number(reason), why });
    options.onGoodbye?.(peer, reason, true);
    await sendGoodbye(host, peer, reason, Math.min(options.requestTimeoutMs, 2000));
    await host.hangUp(peer).catch(() => undefined);
  }

  /** The peer's Status against ours: a relevant peer becomes ready (and its MetaData is asked for). */
  const judge = (peer: PeerId, remote: Status) => {
    // A peer that left meanwhile leaves no entry behind.
    if (host.getConnections(peer).length === 0) return;
    const entry = state(peer);
    entry.status = remote;
    const problem = irrelevance(status(), remote);
    if (problem !== null) {
      void disconnect(peer, GOODBYE.irrelevantNetwork, problem);
      return;
    }
    if (!entry.ready && !entry.leaving) {
      entry.ready = true;
      options.onReady?.(peer, remote);
      void refreshMetadata(peer);
    }
  };

  async function refreshMetadata(peer: PeerId): Promise<void> {
    try {
      const version = versionsAt(config, wallEpoch()).metadata;
      const answer = await requestMetadata(host, peer, version, options.requestTimeoutMs);
      const entry = peers.get(peer.toString());
      if (entry) entry.metadata = answer;
    } catch (error) {
      options.log.warn('consensus peer metadata request failed', { peer: peer.toString(), reason: (error as Error).message });
    }
  }

  async function handshake(peer: PeerId): Promise<void> {
    const preferred = versionsAt(config, wallEpoch()).status;
    let remote: Status;
    try {
      try {
        remote = await requestStatus(host, peer, preferred, status(), options.requestTimeoutMs);
      } catch (error) {
        // A peer that does not speak the preferred version (protocol negotiation fails) may speak the other one.
        if (!/protocol/i.test((error as Error).message)) throw error;
        const other: StatusVersion = preferred === 2 ? 1 : 2;
        remote = await requestStatus(host, peer, other, status(), options.requestTimeoutMs);
      }
    } catch (error) {
      if (!stopping && host.getConnections(peer).length > 0) await disconnect(peer, GOODBYE.fault, `no status: ${(error as Error).message}`);
      return;
    }
    judge(peer, remote);
  }

  async function respond(protocol: string, stream: Stream, answer: (request: Uint8Array) => Uint8Array, after?: () => void): Promise<void> {
    let response: Uint8Array;
    try {
      response = answer(await readAll(stream.source, MAX_REQUEST_BYTES));
    } catch (error) {
      response = encodeErrorChunk(RESULT.invalidRequest, `${protocol}: ${(error as Error).message}`);
    }
    try {
      await stream.sink([response]);
    } catch (error) {
      stream.abort(error as Error);
    }
    after?.();
  }

  const handlers: Array<[string, (peer: PeerId, stream: Stream) => Promise<void>]> = [];
  for (const version of [1, 2] as const) {
    const type = STATUS_TYPES.get(version)!;
    handlers.push([STATUS_PROTOCOL.get(version)!, async (peer, stream) => {
      let remote: Status | null = null;
      await respond(STATUS_PROTOCOL.get(version)!, stream, (request) => {
        remote = decodeStatus(version, decodeRequest(request, type.fixedSize ?? 0, type.maxSize));
        return encodeSuccessChunk(null, encodeStatus(version, status()));
      }, () => { if (remote) judge(peer, remote); });
    }]);
  }
  handlers.push([PEER_PROTOCOLS.ping, async (peer, stream) => {
    let seq: bigint | null = null;
    await respond(PEER_PROTOCOLS.ping, stream, (request) => {
      seq = PingOrGoodbye.deserialize(decodeRequest(request, 8, 8));
      return encodeSuccessChunk(null, PingOrGoodbye.serialize(metadata.seqNumber));
    }, () => {
      const entry = peers.get(peer.toString());
      if (seq === null || !entry?.ready) return;
      entry.pingSeq = seq;
      if (entry.metadata?.seqNumber !== seq) void refreshMetadata(peer);
    });
  }]);
  for (const version of [1, 2, 3] as const) {
    handlers.push([METADATA_PROTOCOL.get(version)!, (_peer, stream) => respond(METADATA_PROTOCOL.get(version)!, stream, (request) => {
      if (request.length !== 0) throw new ReqRespError('a MetaData request has no content');
      return encodeSuccessChunk(null, encodeMetadata(version, metadata));
    })]);
  }
  handlers.push([PEER_PROTOCOLS.goodbye, async (peer, stream) => {
    let reason: bigint | null = null;
    await respond(PEER_PROTOCOLS.goodbye, stream, (request) => {
      reason = PingOrGoodbye.deserialize(decodeRequest(request, 8, 8));
      return encodeSuccessChunk(null, PingOrGoodbye.serialize(0n));
    }, () => {
      if (reason === null) return;
      const entry = peers.get(peer.toString());
      if (entry) entry.leaving = true;
      options.log.info('consensus peer said goodbye', { peer: peer.toString(), reason: Number(reason) });
      options.onGoodbye?.(peer, reason, false);
      // The answer is on its way: the sender closes the connection once it has it; if it does not, it is closed
      // after a grace period (closing at once could cut the answer off).
      setTimeout(() => void host.hangUp(peer).catch(() => undefined), GOODBYE_GRACE_MS).unref();
    });
  }]);
  for (const [protocol, handle] of handlers) {
    await host.handle(protocol, ({ stream, connection }) => void handle(connection.remotePeer, stream as unknown as Stream), { maxInboundStreams: 8 });
  }

  const onConnect = (event: CustomEvent<PeerId>) => {
    if (stopping) return;
    state(event.detail);
    void handshake(event.detail);
  };
  const onDisconnect = (event: CustomEvent<PeerId>) => {
    peers.delete(event.detail.toString());
  };
  host.addEventListener('peer:connect', onConnect);
  host.addEventListener('peer:disconnect', onDisconnect);

  const ping = async (id: string, entry: PeerState) => {
    const connection = host.getConnections().find((c) => c.remotePeer.toString() === id);
    if (!connection) return;
    const peer = connection.remotePeer;
    try {
      const seq = await requestPing(host, peer, metadata.seqNumber, options.requestTimeoutMs);
      entry.pingFailures = 0;
      entry.pingSeq = seq;
      if (entry.metadata?.seqNumber !== seq) await refreshMetadata(peer);
    } catch (error) {
      entry.pingFailures += 1;
      if (entry.pingFailures >= maxPingFailures && !stopping) await disconnect(peer, GOODBYE.fault, `${entry.pingFailures} pings unanswered: ${(error as Error).message}`);
    }
  };
  const timer = setInterval(() => {
    for (const [id, entry] of peers) if (entry.ready && !entry.leaving) void ping(id, entry);
  }, options.pingIntervalMs);
  timer.unref();

  return {
    peers,
    metadata,
    status,
    disconnect,
    async stop() {
      stopping = true;
      clearInterval(timer);
      host.removeEventListener('peer:connect', onConnect);
      host.removeEventListener('peer:disconnect', onDisconnect);
      const connected = [...new Map(host.getConnections().map((c) => [c.remotePeer.toString(), c.remotePeer])).values()];
      await Promise.all(connected.map(async (peer) => {
        const entry = peers.get(peer.toString());
        if (entry?.leaving) return;
        if (entry) entry.leaving = true;
        options.onGoodbye?.(peer, GOODBYE.clientShutdown, true);
        await sendGoodbye(host, peer, GOODBYE.clientShutdown, Math.min(options.requestTimeoutMs, 1000));
      }));
      for (const [protocol] of handlers) await host.unhandle(protocol).catch(() => undefined);
    },
  };
}

