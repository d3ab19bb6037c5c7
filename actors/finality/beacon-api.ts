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
import { hexToBytes, type Hex } from '../../net/eth/hex.js';

export interface BeaconApiFinalityArgs {
  readonly urls: readonly string[];
  readonly minimumAgreement: number;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
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

export interface BeaconFinality {
  round(): Promise<BeaconRound>;
  close(): void;
}

export function createBeaconFinality(args: BeaconApiFinalityArgs): BeaconFinality {
  const shutdown = new AbortController();
  const clients: BeaconClient[] = args.urls.map((url) => createBeaconClient({
    url, timeoutMs: args.requestTimeoutMs, maxRetries: args.maxRetries, backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs, signal: shutdown.signal,
  }));
  const lightClient = args.lightClient
    ? new BeaconLightClient(chainConfigFromData(args.lightClient.chain), hexToBytes(args.lightClient.checkpointRoot, 32), clients)
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

  async function byProof(client: BeaconLightClient): Promise<BeaconRound> {
    const report = await client.sync();
    if (!report.finalized) {
      const why = client.bootstrapped ? 'the verified finalized header has no execution payload (before Capella)' : `no endpoint served a bootstrap that verifies against checkpoint ${args.lightClient!.checkpointRoot}`;
      return { kind: 'unavailable', reason: `${why}${report.problems.length ? ` (${report.problems.join('; ')})` : ''}` };
    }
    return { kind: 'finalized', number: report.finalized.number, hash: report.finalized.hash, detail: `light-client verified slot ${report.finalized.slot}`, problems: report.problems };
  }

  return {
    round: () => (lightClient ? byProof(lightClient) : byAgreement()),
    close: () => shutdown.abort(new Error('the finality lane is stopping')),
  };
}
