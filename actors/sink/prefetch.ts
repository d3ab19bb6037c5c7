/**
 * Batches of changes read ahead of the transactions (issue 32's Measure): while one transaction runs, the next
 * batches are fetched, up to `capacity` changes held; a sink that is behind then applies every batch already held
 * (up to `sink.max_transaction_changes`) in one transaction — fewer commits, and a hot row written once for all of
 * them. Caught up, a batch is taken as soon as it arrives, alone.
 */

export type Taken<T, R> =
  | { readonly kind: 'batches'; readonly batches: readonly T[] }
  | { readonly kind: 'end'; readonly value: R };

export class Prefetch<T, R> {
  private readonly held: T[] = [];
  private heldSize = 0;
  private end: { value: R } | null = null;
  private failure: { error: unknown } | null = null;
  private closed = false;
  private wakeTaker: (() => void) | null = null;
  private wakePump: (() => void) | null = null;
  private readonly pumping: Promise<void>;

  constructor(
    private readonly source: AsyncIterator<T, R>,
    private readonly sizeOf: (batch: T) => number,
    private readonly capacity: number,
  ) {
    this.pumping = this.pump();
  }

  private async pump(): Promise<void> {
    try {
      while (!this.closed) {
        while (this.heldSize >= this.capacity && !this.closed) await new Promise<void>((resolve) => { this.wakePump = resolve; });
        if (this.closed) break;
        const next = await this.source.next();
        if (this.closed) break;
        if (next.done) {
          this.end = { value: next.value };
          break;
        }
        this.held.push(next.value);
        this.heldSize += this.sizeOf(next.value);
        this.wake();
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.closed = true;
      this.wake();
    }
  }

  private wake(): void {
    const wake = this.wakeTaker;
    this.wakeTaker = null;
    wake?.();
  }

  /**
   * Waits for a batch, then returns the batches held in order up to `max` changes (always at least one); the
   * source's end (or failure) once every batch before it was taken.
   */
  async take(max: number): Promise<Taken<T, R>> {
    while (this.held.length === 0 && !this.closed) await new Promise<void>((resolve) => { this.wakeTaker = resolve; });
    if (this.held.length === 0) {
      if (this.failure) throw this.failure.error;
      if (this.end) return { kind: 'end', value: this.end.value };
      throw new Error('prefetch closed');
    }
    const batches: T[] = [];
    let size = 0;
    while (this.held.length > 0 && (batches.length === 0 || size + this.sizeOf(this.held[0]!) <= max)) {
      const batch = this.held.shift()!;
      size += this.sizeOf(batch);
      batches.push(batch);
    }
    this.heldSize -= size;
    const wake = this.wakePump;
    this.wakePump = null;
    wake?.();
    return { kind: 'batches', batches };
  }

  /** Stops reading ahead; settles once the fetch in flight (if any) settled. Batches held are dropped. */
  async close(): Promise<void> {
    this.closed = true;
    this.held.length = 0;
    this.heldSize = 0;
    const wake = this.wakePump;
    this.wakePump = null;
    wake?.();
    await this.pumping;
  }
}
