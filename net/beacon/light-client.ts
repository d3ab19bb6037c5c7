/**
 * A light client over Beacon API endpoints: bootstraps from a weak-subjectivity checkpoint root
 * (`/eth/v1/beacon/light_client/bootstrap/{root}`), catches up period by period (`updates`) and
 * follows `finality_update`, verifying every object (./sync-protocol.ts) before it touches the
 * store. Endpoints are only transport: an object that fails verification is reported and the next
 * endpoint is tried, so one lying endpoint cannot move finality.
 */
import { bytesToHex, type Hex } from '../eth/hex.js';
import type { BeaconClient } from './api-client.js';
import { currentSlot, periodAtSlot, type BeaconChainConfig } from './config.js';
import { LightClientError } from './errors.js';
import { parseBootstrap, parseFinalityUpdate, parseOptimisticUpdate, parseUpdate } from './json.js';
import { finalizedExecution, initializeStore, processFinalityUpdate, processUpdate, validateUpdate, type LightClientStore } from './sync-protocol.js';
import type { LightClientUpdate } from './types.js';

const MAX_REQUEST_UPDATES = 128;

export interface VerifiedFinality {
  readonly slot: number;
  readonly number: number;
  readonly hash: Hex;
}

export interface SyncReport {
  /** The verified finalized execution block (null before Capella or before bootstrap). */
  readonly finalized: VerifiedFinality | null;
  /** Objects that failed verification or endpoints that failed, this round. */
  readonly problems: readonly string[];
  /** Updates and finality updates that passed verification this round (a finality update taken before is not verified again). */
  readonly verified: number;
}

export class BeaconLightClient {
  private store: LightClientStore | null = null;
  /**
   * The last finality update this store took (its JSON text). Polling finds the same one until the chain's head
   * moves (12 s a slot on mainnet, rounds every `poll_interval_ms`): taking it again changes nothing, but its
   * signature check is a BLS pairing (tens of ms), which every poll paid.
   */
  private lastTaken: string | null = null;

  constructor(
    private readonly config: BeaconChainConfig,
    private readonly checkpointRoot: Uint8Array,
    private readonly clients: readonly BeaconClient[],
    private readonly now: () => number = Date.now,
  ) {}

  get bootstrapped(): boolean {
    return this.store !== null;
  }

  /** The store as it stands (null before bootstrap), to persist; see ./store-codec.ts. */
  get current(): LightClientStore | null {
    return this.store;
  }

  /** Continues from a store kept across a restart (restored by ./store-codec.ts) instead of bootstrapping. */
  resume(store: LightClientStore): void {
    this.store = store;
    this.lastTaken = null;
  }

  /** Forgets the store: the next round bootstraps from the checkpoint again. */
  reset(): void {
    this.store = null;
    this.lastTaken = null;
  }

  /** Tries each endpoint's bootstrap until one verifies against the checkpoint root. */
  async bootstrap(): Promise<string[]> {
    const problems: string[] = [];
    const root = bytesToHex(this.checkpointRoot);
    for (const client of this.clients) {
      try {
        const json = await client.get(`/eth/v1/beacon/light_client/bootstrap/${root}`);
        if (json === null) {
          problems.push(`${client.endpoint} has no light-client bootstrap for ${root}`);
          continue;
        }
        this.store = initializeStore(this.config, this.checkpointRoot, parseBootstrap(this.config, json));
        return problems;
      } catch (error) {
        problems.push(`${client.endpoint}: bootstrap ${root}: ${(error as Error).message}`);
      }
    }
    return problems;
  }

  /**
   * A finality update pushed by an endpoint (its `light_client_finality_update` event): verified and
   * applied like a fetched one when the store can verify it as it stands. Null when it cannot (not
   * bootstrapped, the next committee unknown, a period gap): the caller runs a full round instead.
   * A failed verification throws, naming the rule.
   */
  offerFinalityUpdate(json: unknown): VerifiedFinality | null {
    const store = this.store;
    if (!store) return null;
    const text = JSON.stringify(json);
    if (text === this.lastTaken) return this.finalized();
    const update = parseFinalityUpdate(this.config, json, 'light_client_finality_update event');
    const storePeriod = periodAtSlot(this.config, store.finalizedHeader.beacon.slot);
    const signaturePeriod = periodAtSlot(this.config, update.signatureSlot);
    if (signaturePeriod !== storePeriod && (store.nextSyncCommittee === null || signaturePeriod > storePeriod + 1)) return null;
    try {
      processFinalityUpdate(this.config, store, update, currentSlot(this.config, this.now()));
      this.lastTaken = text;
    } catch (error) {
      if (!(error instanceof LightClientError && error.code === 'irrelevant_update')) throw error;
    }
    return this.finalized();
  }

  /**
   * Gossip validation (consensus p2p): whether a pushed finality or optimistic update verifies against the store as it
   * stands, without applying it. `reject`: it breaks a rule of the sync protocol (never forwarded, never believed);
   * `ignore`: the store cannot judge it (not bootstrapped, another period, not newer); `accept`: it verifies.
   */
  checkPushed(kind: 'finality_update' | 'optimistic_update', json: unknown): 'accept' | 'ignore' | 'reject' {
    const store = this.store;
    if (!store) return 'ignore';
    let update: LightClientUpdate;
    try {
      if (kind === 'finality_update') {
        const parsed = parseFinalityUpdate(this.config, json, 'light_client_finality_update gossip');
        const hasFinality = parsed.finalityBranch.some((node) => node.some((b) => b !== 0));
        update = { ...parsed, finalizedHeader: hasFinality ? parsed.finalizedHeader : null, nextSyncCommittee: null, nextSyncCommitteeBranch: [] };
      } else {
        update = { ...parseOptimisticUpdate(this.config, json, 'light_client_optimistic_update gossip'), finalizedHeader: null, finalityBranch: [], nextSyncCommittee: null, nextSyncCommitteeBranch: [] };
      }
    } catch {
      return 'reject';
    }
    try {
      validateUpdate(this.config, store, update, currentSlot(this.config, this.now()));
      return 'accept';
    } catch (error) {
      if (!(error instanceof LightClientError)) throw error;
      return error.code === 'irrelevant_update' || error.code === 'period_not_followable' || error.code === 'invalid_slot_order' ? 'ignore' : 'reject';
    }
  }

  finalized(): VerifiedFinality | null {
    const execution = this.store ? finalizedExecution(this.store) : null;
    return execution ? { slot: execution.slot, number: execution.number, hash: bytesToHex(execution.hash) } : null;
  }

  /**
   * One round: the latest finality update; when it is signed in a period the store cannot verify
   * yet (or the next committee is unknown), the period updates from the store's period up to the
   * update's, then the finality update again.
   */
  async sync(): Promise<SyncReport> {
    const problems: string[] = [];
    if (!this.store) problems.push(...(await this.bootstrap()));
    const store = this.store;
    if (!store) return { finalized: null, problems, verified: 0 };
    const slotNow = currentSlot(this.config, this.now());
    for (const client of this.clients) {
      try {
        const verified = await this.round(client, store, slotNow);
        return { finalized: this.finalized(), problems, verified };
      } catch (error) {
        problems.push(`${client.endpoint}: ${(error as Error).message}`);
      }
    }
    return { finalized: this.finalized(), problems, verified: 0 };
  }

  private async round(client: BeaconClient, store: LightClientStore, slotNow: number): Promise<number> {
    const json = await client.get('/eth/v1/beacon/light_client/finality_update');
    if (json === null) return 0;
    const text = JSON.stringify(json);
    if (text === this.lastTaken) return 0;
    const update = parseFinalityUpdate(this.config, json);
    const storePeriod = periodAtSlot(this.config, store.finalizedHeader.beacon.slot);
    const signaturePeriod = periodAtSlot(this.config, update.signatureSlot);
    let verified = 0;
    if (store.nextSyncCommittee === null || signaturePeriod > storePeriod + 1) verified += await this.catchUp(client, store, slotNow, signaturePeriod);
    try {
      processFinalityUpdate(this.config, store, update, slotNow);
      this.lastTaken = text;
      return verified + 1;
    } catch (error) {
      if (error instanceof LightClientError && error.code === 'irrelevant_update') return verified;
      throw error;
    }
  }

  private async catchUp(client: BeaconClient, store: LightClientStore, slotNow: number, wantPeriod: number): Promise<number> {
    let verified = 0;
    const storePeriod = periodAtSlot(this.config, store.finalizedHeader.beacon.slot);
    const count = Math.min(MAX_REQUEST_UPDATES, Math.max(1, wantPeriod - storePeriod + 1));
    const json = await client.get(`/eth/v1/beacon/light_client/updates?start_period=${storePeriod}&count=${count}`);
    if (!Array.isArray(json)) throw new LightClientError('malformed', 'updates: expected an array of {version, data}');
    for (const [i, entry] of json.entries()) {
      const update = parseUpdate(this.config, entry, `updates[${i}]`);
      // Periods the store has already moved past are old news, not a lie.
      if (periodAtSlot(this.config, update.signatureSlot) < periodAtSlot(this.config, store.finalizedHeader.beacon.slot)) continue;
      try {
        processUpdate(this.config, store, update, slotNow);
        verified += 1;
      } catch (error) {
        if (error instanceof LightClientError && error.code === 'irrelevant_update') continue;
        throw error;
      }
    }
    return verified;
  }
}
