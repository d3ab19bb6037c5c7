/**
 * The `beacon_api` finality backend, driven by the finality lane: one round reads the finalized
 * execution anchor from the configured Beacon API endpoints, either
 *  - by agreement: each endpoint's finalized checkpoint and its block's execution payload, agreed by
 *    `minimum_agreement` endpoints (a contradiction between endpoints fails closed), or
 *  - by proof (`checkpoint_root` set): a light client bootstrapped from the weak-subjectivity
 *    checkpoint verifies every update, so any single honest-or-not endpoint is only transport.
 */
import { createBeaconClient, type BeaconClient } from '../../net/beacon/api-client.js';
import { chainConfigFromData, type BeaconChainConfigData } from '../../net/beacon/config.js';
import { decideAgreement, readFinalizedAnchor, type AnchorReport } from '../../net/beacon/finalized-anchor.js';
import { BeaconLightClient } from '../../net/beacon/light-client.js';
import { restoreStore, encodeStore, storeStateKey, StoreRecordRejected, type StoreRecord } from '../../net/beacon/store-codec.js';
import { periodAtSlot } from '../../net/beacon/config.js';
import { finalizedExecution, type LightClientStore } from '../../net/beacon/sync-protocol.js';
import { bytesToHex, hexToBytes, type Hex } from '../../net/eth/hex.js';

export interface BeaconApiFinalityArgs {
  readonly urls: readonly string[];
  readonly minimumAgreement: number;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Subscribe to each endpoint's event stream (finalized_checkpoint, light_client_finality_update) to read finality at once. */
  readonly eventStream?: boolean;
  /** Light-client mode: the weak-subjectivity checkpoint block root and the beacon chain it belongs to. */
  readonly lightClient: { readonly checkpointRoot: Hex; readonly chain: BeaconChainConfigData } | null;
}

export type BeaconRound =
  /** The finalized execution block to announce (proven, or agreed). */
  | { readonly kind: 'finalized'; readonly number: number; readonly hash: Hex; readonly detail: string; readonly problems: readonly string[] }
  /** Endpoints contradict each other: nothing may advance. */
  | { readonly kind: 'disagreement'; readonly reason: string }
  /** Nothing usable yet (endpoints down, no agreement reached, not bootstrapped). */
  | { readonly kind: 'unavailable'; readonly reason: string };

/** Where light-client mode keeps its store across restarts (the finality lane's LMDB table). */
export interface LightClientPersistence {
  /** The stored record, or undefined when there is none. */
  load(): unknown;
  save(record: StoreRecord): Promise<void>;
  discard(): Promise<void>;
  /** The stored canonical chain's hash at `number`, or null when the chain has no block there. */
  canonicalHash(number: number): Hex | null;
  info(message: string, fields: Record<string, unknown>): void;
  warn(message: string, fields: Record<string, unknown>): void;
}

export interface BeaconFinality {
  round(): Promise<BeaconRound>;
  /**
   * An event from an endpoint's stream. Light-client mode verifies a `light_client_finality_update`
   * event's own data (no request); null: nothing to conclude from the event alone, run a round.
   */
  offer(topic: string, data: string): Promise<BeaconRound | null>;
  /** Gossip validation of a pushed update against the light client's store (consensus_p2p); `ignore` without a light client. */
  check(kind: 'finality_update' | 'optimistic_update', json: unknown): 'accept' | 'ignore' | 'reject';
  /** The light client's verified store (null before bootstrap or without a light client). */
  lightClientStore?(): LightClientStore | null;
  close(): void;
}

/**
 * `transport`: the light client's sources instead of `args.urls` (consensus_p2p: one per connected peer, a live list
 * the peer manager updates in place); every object is verified the same way whichever transport brought it.
 */
export function createBeaconFinality(args: BeaconApiFinalityArgs, persistence?: LightClientPersistence, transport?: BeaconClient[]): BeaconFinality {
  const shutdown = new AbortController();
  const clients: BeaconClient[] = transport ?? args.urls.map((url) => createBeaconClient({
    url, timeoutMs: args.requestTimeoutMs, maxRetries: args.maxRetries, backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs, signal: shutdown.signal,
  }));
  const chainConfig = args.lightClient ? chainConfigFromData(args.lightClient.chain) : null;
  const lightClient = args.lightClient && chainConfig
    ? new BeaconLightClient(chainConfig, hexToBytes(args.lightClient.checkpointRoot, 32), clients)
    : null;

  async function byAgreement(): Promise<BeaconRound> {
    const reports = await Promise.all(clients.map(async (client): Promise<AnchorReport> => {
      try {
        return { endpoint: client.endpoint, anchor: await readFinalizedAnchor(client) };
      } catch (error) {
        return { endpoint: client.endpoint, error: (error as Error).message };
      }
    }));
    const outcome = decideAgreement(reports, args.minimumAgreement);
    if (outcome.kind === 'disagreement') return outcome;
    if (outcome.kind === 'insufficient') return { kind: 'unavailable', reason: outcome.reason };
    const { anchor, endpoints } = outcome;
    const problems = reports.filter((r) => 'error' in r).map((r) => `${r.endpoint}: ${(r as { error: string }).error}`);
    return { kind: 'finalized', number: anchor.execution.number, hash: anchor.execution.hash, detail: `checkpoint epoch ${anchor.epoch} root ${anchor.root}, agreed by ${endpoints.join(', ')}`, problems };
  }

  let savedKey: string | null = null;
  let resumeChecked = false;

  /**
   * Once, before the first round: continue from the stored store when it is for this chain and this
   * checkpoint and its finalized execution block still links to the stored chain; otherwise discard it
   * (saying why) and bootstrap.
   */
  async function resumeStored(client: BeaconLightClient): Promise<void> {
    resumeChecked = true;
    if (!persistence || !args.lightClient || !chainConfig) return;
    const record = persistence.load();
    if (record === undefined) return;
    const config = chainConfig;
    try {
      const store = restoreStore(config, hexToBytes(args.lightClient.checkpointRoot, 32), record);
      const execution = finalizedExecution(store);
      if (execution) {
        const stored = persistence.canonicalHash(execution.number);
        const hash = bytesToHex(execution.hash);
        if (stored !== null && stored !== hash) {
          throw new StoreRecordRejected(`its finalized execution block ${execution.number} ${hash} no longer links to the stored chain (canonical there: ${stored})`);
        }
      }
      client.resume(store);
      savedKey = storeStateKey(store);
      persistence.info('light client resumed from its stored store', { slot: store.finalizedHeader.beacon.slot, period: periodAtSlot(config, store.finalizedHeader.beacon.slot), nextCommittee: store.nextSyncCommittee !== null });
    } catch (error) {
      if (!(error instanceof StoreRecordRejected)) throw error;
      persistence.warn('discarding the stored light-client store; bootstrapping from the checkpoint again', { reason: error.message, checkpoint: args.lightClient.checkpointRoot });
      await persistence.discard();
    }
  }

  async function persist(client: BeaconLightClient): Promise<void> {
    const store = client.current;
    if (!persistence || !store || !args.lightClient || !chainConfig) return;
    const key = storeStateKey(store);
    if (key === savedKey) return;
    await persistence.save(encodeStore(chainConfig, hexToBytes(args.lightClient.checkpointRoot, 32), store));
    savedKey = key;
  }

  async function byProof(client: BeaconLightClient): Promise<BeaconRound> {
    if (!resumeChecked) await resumeStored(client);
    const report = await client.sync();
    await persist(client);
    if (!report.finalized) {
      const why = clients.length === 0 ? 'no connected peer or endpoint to ask' : client.bootstrapped ? 'the verified finalized header has no execution payload (before Capella)' : `no endpoint served a bootstrap that verifies against checkpoint ${args.lightClient!.checkpointRoot}`;
      return { kind: 'unavailable', reason: `${why}${report.problems.length ? ` (${report.problems.join('; ')})` : ''}` };
    }
    return { kind: 'finalized', number: report.finalized.number, hash: report.finalized.hash, detail: `light-client verified slot ${report.finalized.slot}`, problems: report.problems };
  }

  async function offer(topic: string, data: string): Promise<BeaconRound | null> {
    if (!lightClient || topic !== 'light_client_finality_update' || !lightClient.bootstrapped) return null;
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      return null;
    }
    const finalized = lightClient.offerFinalityUpdate(json);
    if (!finalized) return null;
    await persist(lightClient);
    return { kind: 'finalized', number: finalized.number, hash: finalized.hash, detail: `light-client verified slot ${finalized.slot} (event)`, problems: [] };
  }

  return {
    round: () => (lightClient ? byProof(lightClient) : byAgreement()),
    offer,
    check: (kind, json) => (lightClient ? lightClient.checkPushed(kind, json) : 'ignore'),
    lightClientStore: () => lightClient?.current ?? null,
    close: () => shutdown.abort(new Error('the finality lane is stopping')),
  };
}
