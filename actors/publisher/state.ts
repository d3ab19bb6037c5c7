/** The `publisher` lane's state (actor.ts) and each instance's publication state (instance-loop.ts). */
import type { ActorContext } from '../../runtime/actor.js';
import type { Store } from '../../store/store.js';
import type { FencedPublisher, PublisherOptions } from '../../net/jetstream/fenced-publisher.js';
import type { DescriptorBucket } from '../../net/jetstream/descriptors.js';
import type { ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import type { PublicationOfProcessor } from '../../api/aggregate/publication-status.js';
import type { PublisherMetrics } from './metrics.js';

export interface PublisherArgs {
  readonly dataDir: string;
  readonly chainId: number;
  /**
   * Every configured processor: the instances of those with delivery on are published, and so are their rebuilds'
   * replacements; backfill-subscription streams are published whatever their processor's delivery.
   */
  readonly processors: readonly ConfiguredProcessor[];
  /** Listener actors told the publication's state (`/v1/status`, `/debug/network`). */
  readonly listeners: readonly string[];
  /** The key-value bucket of descriptors relays read (docs/jetstream.md "Descriptors"). */
  readonly descriptorBucket: string;
  readonly publisher: Omit<PublisherOptions, 'storeEpoch' | 'ancestorEpochs'>;
  readonly maxMessageBytes: number;
  readonly retryInitialMs: number;
}

export type Ctx = ActorContext<PublisherArgs>;

export interface Lane {
  /** The processor as the API serves it, with this lane's instance (a replacement's or a subscription stream's included). */
  readonly processor: ConfiguredProcessor;
  readonly instance: string;
  /**
   * `configured`: a processor's configured instance; `replacement`: a rebuild's (both put the processor id's descriptor
   * while they serve it); `subscription`: a backfill subscription's stream (no descriptor: relays do not serve it).
   */
  readonly kind: 'configured' | 'replacement' | 'subscription';
  /** Put the descriptor on the next pass (the instance became the processor's serving one). */
  describeNow: boolean;
  wake: (() => void) | null;
  pending: boolean;
  state: PublicationOfProcessor['state'];
  /** Last change sequence JetStream acknowledged (known once the subject was read). */
  published: bigint;
  /** Changes up to this sequence were committed before this process was notified of their commit (no commit time). */
  unnotifiedThrough: number;
  /** Commit times of notified sequences not yet published, oldest first (lag in seconds, `Chain-Node-Committed-At`). */
  readonly commits: Array<{ readonly sequence: number; readonly at: number }>;
  readonly resets: { epoch_changed: number; retention_gap: number };
  lagChanges: number;
  lagSeconds: number;
}

export interface State {
  readonly store: Store;
  /** Ends the current retry pause at once (stop). */
  readonly pauses: Set<() => void>;
  /** By processor id (configured instances) or by instance (replacements and subscription streams: their lanes' notices name them). */
  readonly lanes: Map<string, Lane>;
  /** Per processor id, the instance that served it at the last look (a promote or rollback changes it). */
  readonly serving: Map<string, string>;
  /** The loops of lanes started after the first ones (extra instances found later). */
  readonly loops: Set<Promise<void>>;
  stopped: boolean;
  publisher: FencedPublisher | null;
  descriptors: DescriptorBucket | null;
  running: Promise<unknown> | null;
  readonly metrics: PublisherMetrics;
  timer: NodeJS.Timeout | null;
}

export const pause = (ms: number, state: State) => new Promise<void>((resolve) => {
  if (state.stopped) return resolve();
  const end = () => { clearTimeout(timer); state.pauses.delete(end); resolve(); };
  const timer = setTimeout(end, ms);
  state.pauses.add(end);
});

/** The commit time of change `sequence` as this process was notified of it, or null (committed before it started). */
export function commitTimeOf(lane: Lane, sequence: bigint): number | null {
  if (sequence <= BigInt(lane.unnotifiedThrough)) return null;
  return lane.commits.find((commit) => BigInt(commit.sequence) >= sequence)?.at ?? null;
}
