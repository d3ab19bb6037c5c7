/**
 * The node's descriptor bucket (docs/jetstream.md "Descriptors"): every processor id's entry — its hello
 * descriptor, coverage, chain, store epoch and subject. The node's publisher puts them (`DescriptorBucket`); a relay
 * keeps its view current with a KV watch (`DescriptorWatch`).
 */
import { Kvm, type KV } from '@nats-io/kv';
import type { JetStreamClient } from '@nats-io/jetstream';
import type { ProcessorCoverage } from '../../store/coverage.js';
import type { ProcessorDescriptor } from '../../store/processor-descriptor.js';

/** The key of processor id `id` in the descriptor bucket: base64url without padding (KV keys allow fewer characters than ids). */
export function descriptorKey(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

export interface PublishedDescriptor {
  readonly format: 1;
  readonly chainId: number;
  readonly storeEpoch: string;
  readonly subject: string;
  readonly processor: ProcessorDescriptor;
  readonly coverage: ProcessorCoverage;
  readonly published: string;
  readonly updatedAt: string;
}

function isDescriptor(value: unknown): value is PublishedDescriptor {
  const d = value as PublishedDescriptor;
  return typeof d === 'object' && d !== null && d.format === 1 && typeof d.chainId === 'number' && typeof d.storeEpoch === 'string'
    && typeof d.subject === 'string' && typeof d.processor?.id === 'string' && typeof d.processor?.instance === 'string' && typeof d.coverage === 'object';
}

export class DescriptorWatch {
  private readonly byId = new Map<string, PublishedDescriptor>();
  private stopped = false;
  private watching: { stop(): void } | null = null;

  private constructor(private readonly kv: KV, private readonly changed: (descriptor: PublishedDescriptor) => void) {}

  /** Opens the bucket (waiting until the node has created it, or `signal` aborts), reads every entry, then watches. */
  static async open(js: JetStreamClient, bucket: string, changed: (descriptor: PublishedDescriptor) => void, retryMs = 500, signal?: AbortSignal): Promise<DescriptorWatch> {
    const kvm = new Kvm(js);
    for (;;) {
      try {
        const watch = new DescriptorWatch(await kvm.open(bucket, { bindOnly: true }), changed);
        await watch.start();
        return watch;
      } catch (error) {
        if (signal?.aborted) throw error;
        await new Promise((resolve) => setTimeout(resolve, retryMs));
      }
    }
  }

  get(id: string): PublishedDescriptor | undefined {
    return this.byId.get(id);
  }

  all(): PublishedDescriptor[] {
    return [...this.byId.values()];
  }

  private take(value: unknown): void {
    if (!isDescriptor(value)) return;
    const before = this.byId.get(value.processor.id);
    if (before && before.updatedAt > value.updatedAt && before.storeEpoch === value.storeEpoch) return;
    this.byId.set(value.processor.id, value);
    this.changed(value);
  }

  /**
   * Watches the bucket: the watch delivers every key's last value, then updates; it resolves once the last value
   * there was at start has arrived (the entry with nothing pending behind it), or at once when the bucket is empty.
   */
  private async start(): Promise<void> {
    const updates = await this.kv.watch();
    this.watching = updates;
    let initialized: () => void = () => undefined;
    const loaded = new Promise<void>((resolve) => { initialized = resolve; });
    void (async () => {
      for await (const entry of updates) {
        if (this.stopped) break;
        if (entry.operation === 'PUT') this.take(safeJson(entry.value));
        if (entry.delta === 0) initialized();
      }
    })();
    if ((await this.kv.status()).values === 0) initialized();
    await loaded;
  }

  stop(): void {
    this.stopped = true;
    this.watching?.stop();
  }
}

function safeJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The node's side of the bucket: creates it when missing (history 1, the stream's replicas) and puts entries. */
export class DescriptorBucket {
  private constructor(private readonly kv: KV) {}

  static async open(js: JetStreamClient, bucket: string, replicas: number): Promise<DescriptorBucket> {
    return new DescriptorBucket(await new Kvm(js).create(bucket, { history: 1, replicas }));
  }

  async put(descriptor: PublishedDescriptor): Promise<void> {
    await this.kv.put(descriptorKey(descriptor.processor.id), JSON.stringify(descriptor));
  }
}
