/**
 * JetStream publication (issue 30, docs/jetstream.md) as last reported by the `publisher` lane (about every second):
 * per processor the published sequence, the lag, the resets and the lane's state, shown by `/v1/status` (extension
 * field `delivery.jetstream`) and `/debug/network`. Kept per listener worker; absent while publication is off.
 */

export interface PublicationOfProcessor {
  readonly instance: string;
  readonly subject: string;
  /** Last change sequence JetStream acknowledged (decimal). */
  readonly publishedSequence: string;
  readonly lagChanges: number;
  readonly lagSeconds: number;
  /** Reset markers published by this process, by reason. */
  readonly resets: { readonly epoch_changed: number; readonly retention_gap: number };
  readonly state: 'connected' | 'unreachable' | 'refused';
  /** The processor's other published change logs: a rebuild's replacement, backfill-subscription streams (absent when none). */
  readonly others?: readonly PublicationOfInstance[];
}

/** One of a processor's other published change logs (actors/publisher/extra-instances.ts). */
export interface PublicationOfInstance {
  readonly instance: string;
  readonly kind: 'replacement' | 'subscription';
  readonly subject: string;
  readonly publishedSequence: string;
  readonly lagChanges: number;
  readonly lagSeconds: number;
  readonly state: PublicationOfProcessor['state'];
}

export interface PublicationStatus {
  readonly stream: string;
  /** The NATS servers the publisher's client knows (empty while unreachable). */
  readonly servers: readonly string[];
  /** ISO-8601 time of the report. */
  readonly reportedAt: string;
  /** By processor id. */
  readonly processors: Readonly<Record<string, PublicationOfProcessor>>;
}

let current: PublicationStatus | null = null;

export function setPublicationStatus(status: PublicationStatus): void {
  current = { stream: status.stream, servers: status.servers, reportedAt: status.reportedAt, processors: status.processors };
}

export function publicationStatus(): PublicationStatus | null {
  return current;
}

/** The processor's `delivery` extension of `/v1/status`, or nothing while the publisher has not reported it. */
export function publicationOf(processorId: string): { delivery?: { jetstream: PublicationOfProcessor & { reportedAt: string } } } {
  const own = current?.processors[processorId];
  return own && current ? { delivery: { jetstream: { ...own, reportedAt: current.reportedAt } } } : {};
}
