/**
 * The `consensus_p2p` finality backend: the light client of the `beacon_api` proof mode (./beacon-api.ts, the same
 * store, persistence and verification) whose transport is the consensus layer's libp2p network instead of Beacon API
 * endpoints: peers found over discv5 by their `eth2` record entry (net/beacon/p2p/consensus-peers.ts), light-client
 * Req/Resp for bootstrap, updates by range and the finality update, and the finality/optimistic update gossip topics
 * of the current fork digest. Gossip is validated against the store before it is forwarded; a finality update that
 * passes is handed to the finality lane like a Beacon API event (verified and applied there).
 */
import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { chainConfigFromData } from '../../net/beacon/config.js';
import { lightClientStatus } from '../../net/beacon/p2p/peer-protocols.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { startConsensusPeers, type ConsensusPeers, type GossipName } from '../../net/beacon/p2p/consensus-peers.js';
import { MAINNET_BLOB_SCHEDULE, NO_BLOB_SCHEDULE } from '../../net/beacon/p2p/fork-digest.js';
import { createBeaconFinality, type BeaconApiFinalityArgs, type BeaconFinality, type LightClientPersistence } from './beacon-api.js';

export interface ConsensusP2pArgs {
  readonly host: string;
  readonly tcpPort: number;
  readonly udpPort: number;
  readonly bootnodes: readonly string[];
  readonly checkpointSlot: number;
  readonly maxPeers: number;
  /** The chain's blob-parameter-only fork schedule (fork digests from Fulu on). */
  readonly blobSchedule: 'mainnet' | 'none';
}

export interface ConsensusFinality extends BeaconFinality {
  readonly peers: ConsensusPeers;
}

export interface ConsensusFinalityHooks {
  /** A gossiped update that passed validation (topic as the Beacon API event names it, data as its JSON). */
  onGossip(topic: GossipName, data: string): void;
  /** The first peer connected (none before): a round can run now rather than at the next poll. */
  onFirstPeer(): void;
  log: { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
}

function nodeKey(): Uint8Array {
  for (;;) {
    const key = new Uint8Array(randomBytes(32));
    if (secp256k1.utils.isValidSecretKey(key)) return key;
  }
}

export async function startConsensusFinality(beacon: BeaconApiFinalityArgs, p2p: ConsensusP2pArgs, persistence: LightClientPersistence | undefined, hooks: ConsensusFinalityHooks): Promise<ConsensusFinality> {
  if (!beacon.lightClient) throw new Error('consensus_p2p needs the checkpoint (finality.checkpoint_root, finality.checkpoint_slot)');
  const config = chainConfigFromData(beacon.lightClient.chain);
  let finality: BeaconFinality | null = null;
  const checkpointRoot = hexToBytes(beacon.lightClient.checkpointRoot, 32);
  let hadPeer = false;
  const peers = await startConsensusPeers({
    privateKey: nodeKey(), host: p2p.host, tcpPort: p2p.tcpPort, udpPort: p2p.udpPort, bootnodes: p2p.bootnodes, config,
    schedule: p2p.blobSchedule === 'mainnet' ? MAINNET_BLOB_SCHEDULE : NO_BLOB_SCHEDULE, checkpointSlot: p2p.checkpointSlot,
    requestTimeoutMs: beacon.requestTimeoutMs, lookupIntervalMs: 30_000, maxPeers: p2p.maxPeers, log: hooks.log,
    chain: () => lightClientStatus(config, finality?.lightClientStore?.() ?? null, checkpointRoot, p2p.checkpointSlot),
    onPeers: (connected) => {
      if (connected === 1 && !hadPeer) hooks.onFirstPeer();
      hadPeer = connected > 0;
    },
    validate: (name, json) => finality?.check(name === 'light_client_finality_update' ? 'finality_update' : 'optimistic_update', json) ?? 'ignore',
    onGossip: (name, json) => {
      if (name === 'light_client_finality_update') hooks.onGossip(name, JSON.stringify(json));
    },
  });
  const inner = createBeaconFinality(beacon, persistence, peers.clients);
  finality = inner;
  return {
    peers,
    round: () => inner.round(),
    offer: (topic, data) => inner.offer(topic, data),
    check: (kind, json) => inner.check(kind, json),
    lightClientStore: () => inner.lightClientStore?.() ?? null,
    close: () => {
      inner.close();
    },
  };
}
