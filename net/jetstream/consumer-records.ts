/**
 * The relays' durable-consumer records (docs/jetstream.md "Relay consumer records"): one entry per consumer in a
 * JetStream key-value bucket, key `<base64url(instance)>.<base64url(consumer id)>`, value the node's ConsumerRecord
 * as JSON (sequences as decimal strings, the credential only as its salted scrypt hash, base64). Every change is a
 * compare-and-set on the entry's revision, re-read and retried when another relay wrote first, so two relays serving
 * one consumer never lose each other's writes.
 *
 * Each record also has a JetStream durable consumer on the stream (filter: the instance's subject, acknowledge-all),
 * created and deleted with it, whose acknowledgement floor follows the record's acknowledged watermark message by
 * message, so `nats consumer info` shows each relay consumer's progress. The record stays the source of truth.
 */
import { createHash } from 'node:crypto';
import { Kvm, type KV } from '@nats-io/kv';
import { AckPolicy, DeliverPolicy, JetStreamApiError, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { ConsumerRecord } from '../../store/consumers.js';
import { HEADER_LAST } from './fenced-publisher.js';

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

export function recordKey(instance: string, id: string): string {
  return `${b64(instance)}.${b64(id)}`;
}

/** The durable consumer's name: JetStream names allow fewer characters than keys. */
export function durableName(instance: string, id: string): string {
  return `relay-${createHash('sha256').update(recordKey(instance, id)).digest('hex').slice(0, 32)}`;
}

export function encodeRecord(record: ConsumerRecord): string {
  return JSON.stringify({
    ...record, leaseExpiresAt: record.leaseExpiresAt,
    credential: { ...record.credential, salt: Buffer.from(record.credential.salt).toString('base64'), hash: Buffer.from(record.credential.hash).toString('base64') },
    start: { ...record.start, sequence: record.start.sequence.toString() },
    delivered: record.delivered.toString(), acknowledged: record.acknowledged.toString(),
    ...(record.moved ? { moved: { ...record.moved, resumeAfter: record.moved.resumeAfter.toString() } } : {}),
  });
}

export function decodeRecord(bytes: Uint8Array): ConsumerRecord {
  const raw = JSON.parse(Buffer.from(bytes).toString('utf8'));
  return {
    ...raw,
    credential: { ...raw.credential, salt: Buffer.from(raw.credential.salt, 'base64'), hash: Buffer.from(raw.credential.hash, 'base64') },
    start: { ...raw.start, sequence: BigInt(raw.start.sequence) },
    delivered: BigInt(raw.delivered), acknowledged: BigInt(raw.acknowledged),
    ...(raw.moved ? { moved: { ...raw.moved, resumeAfter: BigInt(raw.moved.resumeAfter) } } : {}),
  } as ConsumerRecord;
}

/** Another writer changed the entry between the read and the write (JetStream's "wrong last sequence"). */
const isRevisionConflict = (error: unknown) => error instanceof JetStreamApiError && error.code === 10071;

/** How often a compare-and-set is tried before the call fails (each retry re-reads the entry, after a short random pause). */
const MAX_ATTEMPTS = 100;
const backoff = (attempt: number) => new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, attempt * 2)));

export class ConsumerRecords {
  private constructor(private readonly kv: KV, private readonly js: JetStreamClient, private readonly jsm: JetStreamManager, private readonly stream: string) {}

  /** The bucket, created with `replicas` when missing (history 1: only the current record matters). */
  static async open(js: JetStreamClient, jsm: JetStreamManager, bucket: string, replicas: number, stream: string): Promise<ConsumerRecords> {
    return new ConsumerRecords(await new Kvm(js).create(bucket, { history: 1, replicas }), js, jsm, stream);
  }

  async get(instance: string, id: string): Promise<{ record: ConsumerRecord; revision: number } | undefined> {
    const entry = await this.kv.get(recordKey(instance, id));
    if (!entry || entry.operation !== 'PUT') return undefined;
    return { record: decodeRecord(entry.value), revision: entry.revision };
  }

  /** Every record of `instance`, in id order. */
  async list(instance: string): Promise<ConsumerRecord[]> {
    const records: ConsumerRecord[] = [];
    for await (const key of await this.kv.keys(`${b64(instance)}.*`)) {
      const entry = await this.kv.get(key);
      if (entry && entry.operation === 'PUT') records.push(decodeRecord(entry.value));
    }
    return records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Stores a new record; false when one exists already. Its durable consumer starts after the record's start. */
  async create(record: ConsumerRecord, subject: string): Promise<boolean> {
    try {
      await this.kv.create(recordKey(record.instance, record.id), encodeRecord(record));
    } catch (error) {
      if (await this.get(record.instance, record.id)) return false;
      throw error;
    }
    await this.jsm.consumers.add(this.stream, {
      durable_name: durableName(record.instance, record.id), filter_subject: subject, ack_policy: AckPolicy.All, deliver_policy: DeliverPolicy.All,
    }).catch(() => undefined);
    return true;
  }

  /**
   * Applies `change` to the current record with compare-and-set, retrying on a concurrent write; `change` answers
   * the record to write (and what the call answers), or `keep` to write nothing. Undefined: there is no such record.
   */
  async update<T>(instance: string, id: string, change: (record: ConsumerRecord) => { write: ConsumerRecord | null; answer: T }): Promise<T | undefined> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.get(instance, id);
      if (!current) return undefined;
      const { write, answer } = change(current.record);
      if (!write) return answer;
      try {
        await this.kv.update(recordKey(instance, id), encodeRecord(write), current.revision);
        return answer;
      } catch (error) {
        if (!isRevisionConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
        await backoff(attempt);
      }
    }
  }

  /** Deletes the record (and its durable consumer); false when there was none. */
  async remove(instance: string, id: string): Promise<boolean> {
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.get(instance, id);
      if (!current) return false;
      try {
        await this.kv.delete(recordKey(instance, id), { previousSeq: current.revision });
        break;
      } catch (error) {
        // Another relay wrote (or deleted) first: read again.
        if (!isRevisionConflict(error) || attempt >= MAX_ATTEMPTS) throw error;
        await backoff(attempt);
      }
    }
    await this.jsm.consumers.delete(this.stream, durableName(instance, id)).catch(() => undefined);
    return true;
  }

  /**
   * Moves the durable consumer's acknowledgement floor up to the last stream message whose changes were all
   * acknowledged (its `Chain-Node-Last-Sequence` ≤ `acknowledged`): fetches from the floor and acknowledges (ack-all)
   * the last such message; a message past it is handed back (nak) for the next call.
   */
  async follow(instance: string, id: string, acknowledged: bigint): Promise<void> {
    const consumer = await this.js.consumers.get(this.stream, durableName(instance, id));
    for (let round = 0; round < 8; round += 1) {
      const batch = await consumer.fetch({ max_messages: 256, expires: 1000 });
      let last = null;
      let past = false;
      for await (const message of batch) {
        if (!past && BigInt(message.headers?.get(HEADER_LAST) || '0') <= acknowledged) {
          last = message;
          continue;
        }
        past = true;
        message.nak();
      }
      if (last) last.ack();
      if (past || !last) return;
    }
  }
}
