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
  /** Keys the bucket held when the watch began (history 1: one value each). */
  private expected = 0;
  private watching: { stop(): void } | null = null;

  private constructor(private readonly kv: KV, private readonly changed: (descriptor: PublishedDescriptor) => void) {}

  /** Opens the bucket (waiting until the node has created it, or `signal` aborts) and starts watching it. */
  static async open(js: JetStreamClient, bucket: string, changed: (descriptor: PublishedDescriptor) => void, retryMs = 500, signal?: AbortSignal): Promise<DescriptorWatch> {
    const kvm = new Kvm(js);
    for (;;) {
      let watch: DescriptorWatch | null = null;
      try {
        watch = new DescriptorWatch(await kvm.open(bucket, { bindOnly: true }), changed);
        await watch.start();
        return watch;
      } catch (error) {
        watch?.stop();
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
   * Watches the bucket: the watch delivers every key's last value, then updates. `loaded` tells when it has delivered
   * as many processors as the bucket held keys when the watch began.
   */
  private async start(): Promise<void> {
    const updates = await this.kv.watch();
    this.watching = updates;
    void (async () => {
      for await (const entry of updates) {
        if (this.stopped) break;
        if (entry.operation === 'PUT') this.take(safeJson(entry.value));
      }
    })();
    this.expected = (await this.kv.status()).values;
  }

  /** Whether every entry the bucket held when the watch began has arrived. */
  get loaded(): boolean {
    return this.byId.size >= this.expected;
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
