/**
 * Fenced publication of one store's change logs to a JetStream stream (issue 30, docs/jetstream.md): one subject
 * per instance; every publish carries `Nats-Msg-Id` `<store epoch>:<instance>:<first sequence>` and
 * `Nats-Expected-Last-Subject-Sequence` (the subject's last stream sequence as this publisher read it), so after a
 * crash or an error the publisher reads the subject's last message and continues at the next change: no gap, no
 * duplicate. A subject whose last message another store wrote is refused, never interleaved.
 */
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { natsConnectionOptions, type NatsAuth } from './connection.js';
import { jetstream, jetstreamManager, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { PublicationMessage } from '../../store/publication-messages.js';

export const HEADER_FIRST = 'Chain-Node-First-Sequence';
export const HEADER_LAST = 'Chain-Node-Last-Sequence';
export const HEADER_STORE = 'Chain-Node-Store-Epoch';
export const HEADER_INSTANCE = 'Chain-Node-Instance';
export const HEADER_COMMITTED_AT = 'Chain-Node-Committed-At';
export const HEADER_RESET = 'Chain-Node-Reset';

/** Why a subject restarts with a reset marker (docs/jetstream.md "Resets"). */
export type ResetReason = 'epoch_changed' | 'retention_gap';

export interface PublisherOptions {
  readonly servers: readonly string[];
  readonly stream: string;
  readonly subjectPrefix: string;
  readonly replicas: 1 | 3;
  readonly maxBytes: number;
  /** Messages kept per subject (-1: no limit). */
  readonly maxMessagesPerSubject: number;
  readonly ackTimeoutMs: number;
  /** This store's epoch as hex: the publisher's identity in every message. */
  readonly storeEpoch: string;
  /** Epochs (hex) this store descends from (store/meta.ts `ancestorEpochs`): a subject last written by one is continued after an `epoch_changed` marker. */
  readonly ancestorEpochs: readonly string[];
  /** Credentials and TLS material (never logged). */
  readonly auth?: NatsAuth;
}

/** Where a subject stands: its last stream sequence and the last change sequence published on it. */
export interface SubjectPosition {
  readonly subjectSequence: number;
  readonly lastChange: bigint;
  /** Set when an ancestor of this store wrote the subject's last message: an `epoch_changed` marker comes first. */
  readonly ancestorEpoch?: string;
}

const sameEpoch = (a: string, b: string) => /^[0-9a-f]{1,16}$/i.test(a) && /^[0-9a-f]{1,16}$/i.test(b) && BigInt(`0x${a}`) === BigInt(`0x${b}`);

/** Why a subject cannot be published: another store wrote its last message. */
export class ForeignPublisherError extends Error {
  constructor(readonly subject: string, readonly otherEpoch: string) {
    super(`subject ${subject} of the JetStream stream holds changes of another store (epoch ${otherEpoch}); refusing to interleave`);
    this.name = 'ForeignPublisherError';
  }
}

export class FencedPublisher {
  private constructor(
    private readonly nc: NatsConnection, private readonly js: JetStreamClient, private readonly jsm: JetStreamManager,
    private readonly options: PublisherOptions,
  ) {}

  static async open(options: PublisherOptions): Promise<FencedPublisher> {
    const nc = await connect(natsConnectionOptions(options.servers, `chain-node publisher ${options.storeEpoch}`, options.auth));
    try {
      const jsm = await jetstreamManager(nc, { timeout: options.ackTimeoutMs });
      const publisher = new FencedPublisher(nc, jetstream(nc, { timeout: options.ackTimeoutMs }), jsm, options);
      publisher.watchStatus();
      await publisher.ensureStream();
      return publisher;
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  /** False while the client is disconnected and reconnecting (it reconnects by itself). */
  get connected(): boolean {
    return !this.disconnected && !this.nc.isClosed();
  }

  private disconnected = false;

  private watchStatus(): void {
    void (async () => {
      for await (const status of this.nc.status()) {
        if (status.type === 'disconnect') this.disconnected = true;
        else if (status.type === 'reconnect') this.disconnected = false;
      }
    })().catch(() => undefined);
  }

  /** The servers the client currently knows (the seeds and those the cluster told it of). */
  servers(): string[] {
    return this.nc.info ? [this.nc.getServer(), ...(this.nc.info.connect_urls ?? []).filter((url) => url !== this.nc.getServer())] : [];
  }

  /** The JetStream client of this publisher's connection (the descriptor bucket shares it). */
  get client(): JetStreamClient {
    return this.js;
  }

  subject(instance: string): string {
    return `${this.options.subjectPrefix}.${instance}`;
  }

  /** The stream, created with the configured limits when it does not exist (an existing one is used as it is). */
  private async ensureStream(): Promise<void> {
    try {
      await this.jsm.streams.info(this.options.stream);
    } catch (error) {
      if (!(error instanceof JetStreamApiError) || error.code !== 10059) throw error;
      await this.jsm.streams.add({
        name: this.options.stream, subjects: [`${this.options.subjectPrefix}.>`], num_replicas: this.options.replicas,
        max_bytes: this.options.maxBytes === 0 ? -1 : this.options.maxBytes, max_msgs_per_subject: this.options.maxMessagesPerSubject,
      });
    }
  }

  /** Reads the subject's last message: where publication of `instance` continues. */
  async position(instance: string): Promise<SubjectPosition> {
    const subject = this.subject(instance);
    let last;
    try {
      last = await this.jsm.streams.getMessage(this.options.stream, { last_by_subj: subject });
    } catch (error) {
      if (error instanceof JetStreamApiError && error.code === 10037) return { subjectSequence: 0, lastChange: 0n };
      throw error;
    }
    if (!last) return { subjectSequence: 0, lastChange: 0n };
    const epoch = last.header.get(HEADER_STORE);
    const position = { subjectSequence: last.seq, lastChange: BigInt(last.header.get(HEADER_LAST)) };
    if (epoch === this.options.storeEpoch) return position;
    if (this.options.ancestorEpochs.some((ancestor) => sameEpoch(ancestor, epoch))) return { ...position, ancestorEpoch: epoch };
    throw new ForeignPublisherError(subject, epoch);
  }

  /** Publishes one message after `at`; the new position, or a JetStreamApiError (10071: the fence refused it). `committedAt`: its last change's commit time (ms). */
  publish(instance: string, at: SubjectPosition, message: PublicationMessage, committedAt: number | null): Promise<SubjectPosition> {
    const h = this.headersOf(instance, message.first, message.last);
    if (committedAt !== null) h.set(HEADER_COMMITTED_AT, String(Math.round(committedAt)));
    return this.append(instance, at, message.payload, h, `${this.options.storeEpoch}:${instance}:${message.first}`, message.last);
  }

  /** Publishes a reset marker after `at`: the subject continues with change `next` (docs/jetstream.md "Resets"). */
  publishReset(instance: string, at: SubjectPosition, reason: ResetReason, next: bigint): Promise<SubjectPosition> {
    const h = this.headersOf(instance, next, next - 1n);
    h.set(HEADER_RESET, reason);
    return this.append(instance, at, new Uint8Array(0), h, `${this.options.storeEpoch}:${instance}:reset:${next}`, next - 1n);
  }

  private headersOf(instance: string, first: bigint, last: bigint) {
    const h = headers();
    h.set(HEADER_FIRST, String(first));
    h.set(HEADER_LAST, String(last));
    h.set(HEADER_STORE, this.options.storeEpoch);
    h.set(HEADER_INSTANCE, instance);
    return h;
  }

  private async append(instance: string, at: SubjectPosition, payload: Uint8Array, h: ReturnType<typeof headers>, msgID: string, lastChange: bigint): Promise<SubjectPosition> {
    const ack = await this.js.publish(this.subject(instance), payload, {
      msgID, headers: h, expect: { lastSubjectSequence: at.subjectSequence }, timeout: this.options.ackTimeoutMs,
    });
    // JetStream checks the message id before the fence: a repeat within the duplicate window is acknowledged as a
    // duplicate (with the original's sequence, not the subject's last), and appends nothing: read where the subject stands.
    if (ack.duplicate) return this.position(instance);
    return { subjectSequence: ack.seq, lastChange };
  }

  async close(): Promise<void> {
    await this.nc.close();
  }
}
