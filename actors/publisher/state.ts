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
  /** The processors whose instance's log is published (delivery on). */
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
  readonly processor: ConfiguredProcessor;
  readonly instance: string;
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
  /** By processor id. */
  readonly lanes: Map<string, Lane>;
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
