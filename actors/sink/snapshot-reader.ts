/**
 * One collection's query-and-follow snapshot (spec §2.7, §4.4 rules 6–7): created with its first page, then read
 * page by page by `nextCursor` (the next page is fetched while the caller copies the current one), released at the
 * end. Pages are stable across node restarts, so a page fetch that fails transiently is retried as it was.
 */
import { NodeHttpError, type NodeClient } from '../../api/client/index.js';
import { SinkStopError } from './errors.js';
import { retryTransient, type RetryOptions } from './retry.js';

export interface EntityResult {
  readonly key: string;
  readonly block: { readonly number: number; readonly hash: string } | null;
  readonly finality: string | null;
  readonly data: Record<string, unknown>;
}

export interface SnapshotPage {
  readonly data: EntityResult[];
  readonly nextCursor: string | null;
  readonly snapshotId: string;
  readonly changeBoundary: { readonly sequence: string };
  readonly boundaryCursor: string | null;
  readonly rowCount: number;
}

export class SnapshotReader {
  private constructor(
    private readonly client: NodeClient,
    private readonly path: string,
    private readonly processor: string,
    private limit: number,
    private readonly retry: RetryOptions,
    readonly collection: string,
    readonly first: SnapshotPage,
    /** The boundary cursor: where following resumes for this collection. */
    readonly boundaryCursor: string,
  ) {}

  get boundary(): bigint {
    return BigInt(this.first.changeBoundary.sequence);
  }

  get rowCount(): number {
    return this.first.rowCount;
  }

  /** Creates the snapshot of `processor`/`collection` and reads its first page. */
  static async open(client: NodeClient, processor: string, collection: string, limit: number, retry: RetryOptions): Promise<SnapshotReader> {
    const path = `/v1/processors/${encodeURIComponent(processor)}/collections/${encodeURIComponent(collection)}/query-and-follow`;
    const state = { limit };
    const first = await postPage(client, path, {}, state, retry, processor, collection);
    if (first.boundaryCursor === null) {
      throw new SinkStopError('delivery_disabled', `processor '${processor}' has no change feed (delivery = false at the node): the sink can copy it but not follow it`);
    }
    return new SnapshotReader(client, path, processor, state.limit, retry, collection, first, first.boundaryCursor);
  }

  /** Every page, the first included; the next page is requested before the current one is handed out. */
  async *pages(): AsyncGenerator<SnapshotPage> {
    let page = this.first;
    for (;;) {
      const next = page.nextCursor === null ? null : this.page(page.nextCursor);
      next?.catch(() => undefined);
      yield page;
      if (next === null) return;
      page = await next;
    }
  }

  private async page(cursor: string): Promise<SnapshotPage> {
    const state = { limit: this.limit };
    const page = await postPage(this.client, this.path, { cursor }, state, this.retry, this.processor, this.collection);
    this.limit = state.limit;
    return page;
  }

  /** Releases the snapshot early (best effort: it expires on its own). */
  async release(): Promise<void> {
    const response = await this.client.request(`/v1/processors/${encodeURIComponent(this.processor)}/query-snapshots/${encodeURIComponent(this.first.snapshotId)}`, { method: 'DELETE' }).catch(() => null);
    await response?.body?.cancel();
  }
}

async function postPage(client: NodeClient, path: string, body: Record<string, unknown>, state: { limit: number }, retry: RetryOptions, processor: string, collection: string): Promise<SnapshotPage> {
  for (;;) {
    try {
      return await retryTransient(() => client.json<SnapshotPage>(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, limit: state.limit }) }), retry);
    } catch (error) {
      if (!(error instanceof NodeHttpError) || error.code !== 'query_too_expensive') throw error;
      const maxPageLimit = Number(error.details?.maxPageLimit);
      if (Number.isSafeInteger(maxPageLimit) && maxPageLimit >= 1 && maxPageLimit < state.limit) {
        state.limit = maxPageLimit;
        continue;
      }
      throw new SinkStopError('query_too_expensive', `the node refused the snapshot of ${processor}/${collection}: ${error.message}. Raise the node's [snapshots] max_rows / max_bytes for a collection this large`, error.details);
    }
  }
}
