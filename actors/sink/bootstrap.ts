/**
 * Bootstrap (issue 32 point 2; spec §4.4 rule 7): a query-and-follow snapshot of each collection, copied with COPY
 * into fresh tables, swapped in — with the cursor row — in ONE transaction: a crash at any moment leaves either the
 * previous tables and cursor or the new ones, never a mix. Snapshots are taken first (each has its own boundary);
 * the durable consumer is then (re)created at the lowest boundary, so the node keeps every change after it while
 * the rows are copied, and following skips, per table, the changes its snapshot already held.
 */
import { once } from 'node:events';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { ConsumerApi, NodeClient } from '../../api/client/index.js';
import type { Logger } from '../../runtime/log.js';
import { copyLine } from './copy-text.js';
import { writeCursor, type CollectionState, type CursorRow } from './cursor-store.js';
import type { SinkMetrics } from './metrics.js';
import { BootstrapProgress } from './progress.js';
import type { RetryOptions } from './retry.js';
import { SnapshotReader } from './snapshot-reader.js';
import { createTableStatement, indexStatements, NEXT_SUFFIX, qualified, swapStatements, type SinkTable } from './tables.js';

export interface BootstrapContext {
  readonly pg: pg.Client;
  readonly node: NodeClient;
  readonly consumer: ConsumerApi;
  readonly schema: string;
  readonly processor: { readonly id: string; readonly instance: string; readonly kind: string };
  readonly tables: readonly SinkTable[];
  readonly pageRows: number;
  readonly retry: RetryOptions;
  readonly log: Logger;
  readonly metrics: SinkMetrics;
  readonly progressIntervalMs: number;
  readonly tty: { write(text: string): unknown } | null;
  /** How many bootstraps the processor's tables had before this one. */
  readonly previousBootstraps: number;
  /** A stop abandons the bootstrap (its transaction is rolled back). */
  readonly signal: AbortSignal;
}

/** Copies the snapshot's rows into the table's `__n` twin; returns how many and the highest block of a finalized row (-1: none). */
async function copySnapshot(ctx: BootstrapContext, table: SinkTable, reader: SnapshotReader): Promise<{ rows: number; finalizedBlock: number }> {
  const next = `${table.name}${NEXT_SUFFIX}`;
  const labels = { processor: ctx.processor.id, collection: table.collection };
  ctx.metrics.bootstrapRowsExpected.set(labels, reader.rowCount);
  const progress = new BootstrapProgress({ log: ctx.log, processor: ctx.processor.id, collection: table.collection, total: reader.rowCount, intervalMs: ctx.progressIntervalMs, tty: ctx.tty });
  const sequence = reader.boundary.toString();
  const stream = ctx.pg.query(copyStreams.from(`COPY ${qualified(ctx.schema, next)} (key, data, block_number, block_hash, finality, change_sequence) FROM STDIN`));
  let failure: Error | null = null;
  stream.on('error', (error: Error) => { failure ??= error; });
  let rows = 0;
  let finalizedBlock = -1;
  try {
    for await (const page of reader.pages()) {
      if (failure) throw failure;
      ctx.signal.throwIfAborted();
      let text = '';
      for (const entity of page.data) {
        if (entity.finality === 'finalized' && entity.block && entity.block.number > finalizedBlock) finalizedBlock = entity.block.number;
        text += copyLine({ key: entity.key, data: JSON.stringify(entity.data), blockNumber: entity.block?.number ?? null, blockHash: entity.block?.hash ?? null, finality: entity.finality, sequence });
      }
      if (!stream.write(text)) await Promise.race([once(stream, 'drain'), once(stream, 'error')]);
      rows += page.data.length;
      ctx.metrics.bootstrapRows.inc(labels, page.data.length);
      progress.add(page.data.length);
    }
    const finished = Promise.race([once(stream, 'finish'), once(stream, 'error').then(([error]) => { throw error; })]);
    stream.end();
    await finished;
    if (failure) throw failure;
  } catch (error) {
    // Ends the COPY with an error so the connection leaves copy mode; the transaction is rolled back by the caller.
    stream.destroy(error as Error);
    await once(stream, 'close').catch(() => undefined);
    throw error;
  }
  progress.finish();
  if (rows !== reader.rowCount) throw new Error(`the snapshot of ${ctx.processor.id}/${table.collection} announced ${reader.rowCount} rows but its pages held ${rows}`);
  return { rows, finalizedBlock };
}

/** Takes the snapshots, recreates the consumer at the lowest boundary, copies and swaps; returns the new cursor row. */
export async function bootstrap(ctx: BootstrapContext, reason: string): Promise<CursorRow> {
  ctx.log.info('bootstrapping from query-and-follow snapshots', { processor: ctx.processor.id, instance: ctx.processor.instance, reason, collections: ctx.tables.map((t) => t.collection) });
  const readers: SnapshotReader[] = [];
  try {
    for (const table of ctx.tables) readers.push(await SnapshotReader.open(ctx.node, ctx.processor.id, table.collection, ctx.pageRows, ctx.retry));
    const start = readers.reduce((low, reader) => (reader.boundary < low.boundary ? reader : low));
    // A consumer left at an older position would hold (or miss) changes: it starts again at the lowest boundary.
    await ctx.consumer.remove();
    await ctx.consumer.create({ position: 'cursor', cursor: start.boundaryCursor });

    await ctx.pg.query('BEGIN');
    try {
      const collections: Record<string, CollectionState> = {};
      let total = 0;
      for (const [index, table] of ctx.tables.entries()) {
        const reader = readers[index]!;
        const next = `${table.name}${NEXT_SUFFIX}`;
        await ctx.pg.query(`DROP TABLE IF EXISTS ${qualified(ctx.schema, next)}`);
        await ctx.pg.query(createTableStatement(ctx.schema, next, table.mapping));
        const copied = await copySnapshot(ctx, table, reader);
        total += copied.rows;
        for (const statement of indexStatements(ctx.schema, next, table.mapping)) await ctx.pg.query(statement);
        collections[table.collection] = { table: table.name, boundary: reader.boundary.toString(), finalizedBlock: copied.finalizedBlock < 0 ? null : copied.finalizedBlock };
      }
      for (const table of ctx.tables) for (const statement of swapStatements(ctx.schema, table.name, table.mapping)) await ctx.pg.query(statement);
      const row: CursorRow = {
        processor: ctx.processor.id, instance: ctx.processor.instance, kind: ctx.processor.kind, consumer: ctx.consumer.settings.id,
        sequence: start.boundary, cursor: start.boundaryCursor, collections, bootstraps: ctx.previousBootstraps + 1,
      };
      await writeCursor(ctx.pg, ctx.schema, row);
      await ctx.pg.query('COMMIT');
      ctx.metrics.bootstraps.inc({ processor: ctx.processor.id, reason: reason.split(':')[0]! });
      ctx.log.info('bootstrapped: tables swapped in with the cursor', { processor: ctx.processor.id, rows: total, sequence: start.boundary.toString(), tables: ctx.tables.map((t) => t.name) });
      return row;
    } catch (error) {
      await ctx.pg.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    await Promise.all(readers.map((reader) => reader.release()));
  }
}
