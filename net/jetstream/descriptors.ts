/**
 * The descriptor KV bucket (issue 30, docs/jetstream.md "Descriptors"): one entry per processor id a client may
 * name, from which relays answer `hello`, `/changes/head` and page `coverage`. The node's publisher writes it; a
 * relay reads it with `descriptorKey` and `PublishedDescriptor`.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { ProcessorCoverage } from '../../store/coverage.js';

/** The value format of a descriptor entry. */
export const DESCRIPTOR_FORMAT = 1;

/** The `hello` frame's `processor` (spec §4.3), as plain data. */
export interface PublishedProcessor {
  readonly id: string;
  readonly instance: string;
  readonly kind: string;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
  readonly output: 'entities' | 'none';
  readonly delivery: boolean;
}

export interface PublishedDescriptor {
  readonly format: typeof DESCRIPTOR_FORMAT;
  readonly chainId: number;
  /** The publishing store's epoch (hex), as in `Chain-Node-Store-Epoch`. */
  readonly storeEpoch: string;
  /** `<subject_prefix>.<processor.instance>`. */
  readonly subject: string;
  readonly processor: PublishedProcessor;
  readonly coverage: ProcessorCoverage;
  /** The last change sequence JetStream acknowledged on `subject` (decimal). */
  readonly published: string;
  /** ISO-8601 time of the put. */
  readonly updatedAt: string;
}

/** The entry's key: the processor id in base64url without padding (KV keys allow fewer characters than ids). */
export function descriptorKey(processorId: string): string {
  return Buffer.from(processorId, 'utf8').toString('base64url');
}

/** The bucket, created with `replicas` and history 1 when missing (an existing one is used as it is). */
export function openDescriptorBucket(nc: NatsConnection, bucket: string, replicas: number): Promise<KV> {
  return new Kvm(nc).create(bucket, { replicas, history: 1 });
}

export async function putDescriptor(kv: KV, descriptor: PublishedDescriptor): Promise<void> {
  await kv.put(descriptorKey(descriptor.processor.id), JSON.stringify(descriptor));
}

/** The processor's entry, or null when the bucket has none. */
export async function readDescriptor(kv: KV, processorId: string): Promise<PublishedDescriptor | null> {
  const entry = await kv.get(descriptorKey(processorId));
  if (!entry || entry.operation !== 'PUT') return null;
  return entry.json<PublishedDescriptor>();
}
