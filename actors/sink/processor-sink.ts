/**
 * One processor's sink (issue 32 points 2–4): its own PostgreSQL connection holding the advisory lock on its
 * tables; bootstrap when its cursor row is missing or no longer matches the node (instance, collections, tables);
 * then follow its durable consumer, each batch applied in one transaction with the cursor and acknowledged after
 * COMMIT. `reset_required` bootstraps again into fresh tables or stops (`sink.on_reset`). Transient failures of the
 * node, the network or PostgreSQL start a new connection and session from the cursor PostgreSQL holds; anything
 * else stops the sink with its reason.
 */
import pg from 'pg';
import { backoffDelay, consumerApi, followConsumer, isResetAnswer, isTransient, NodeHttpError, type ConsumerApi, type FollowOutcome, type NodeClient } from '../../api/client/index.js';
import { errorFields, type Logger } from '../../runtime/log.js';
import { bootstrap } from './bootstrap.js';
import type { SinkConfig, SinkProcessorEntry } from './config.js';
import { lockHolder, readCursor, tryLockProcessor, type CursorRow } from './cursor-store.js';
import { isTransientPostgresError, SinkStopError } from './errors.js';
import { declaredMapping } from './mappings/declared.js';
import { KIND_MAPPINGS, UnknownChangeError, type KindMapping } from './mappings/index.js';
import { setState, type SinkMetrics, type SinkState } from './metrics.js';
import { CursorMovedError, prepareTransaction, runTransaction } from './page-apply.js';
import { FeedGapError, planPage } from './page-plan.js';
import { Prefetch } from './prefetch.js';
import { retryTransient, type RetryOptions } from './retry.js';
import { defaultTablePrefix, expectedColumns, MAX_TABLE_NAME, type SinkTable } from './tables.js';

export interface ProcessorSinkOptions {
  readonly entry: SinkProcessorEntry;
  readonly config: SinkConfig;
  /** The node (processors, snapshots). */
  readonly node: NodeClient;
  /** Where the consumer is followed (the node or a relay). */
  readonly follow: NodeClient;
  readonly credential: string;
  readonly pgConfig: pg.ClientConfig;
  readonly log: Logger;
  readonly metrics: SinkMetrics;
  readonly tty: { write(text: string): unknown } | null;
  readonly signal: AbortSignal;
}

interface ProcessorInfo { readonly id: string; readonly instance: string; readonly kind: string; readonly changeSchema: string }

/** Failures a new session may cure: the node or network (spec §4.8 policy), PostgreSQL's connection. */
function transient(error: unknown): boolean {
  if (error instanceof SinkStopError || error instanceof FeedGapError || error instanceof CursorMovedError || error instanceof UnknownChangeError) return false;
  // A reset answer here (a consumer created at a boundary already pruned) is cured by a new bootstrap.
  if (error instanceof NodeHttpError) return isTransient(error) || isResetAnswer(error);
  if (error instanceof Error && (error.message === 'fetch failed' || error.name === 'TimeoutError')) return true;
  return isTransientPostgresError(error);
}

export class ProcessorSink {
  private state: SinkState = 'bootstrapping';
  readonly id: string;
  private readonly consumer: ConsumerApi;
  private readonly retry: RetryOptions;

  constructor(private readonly options: ProcessorSinkOptions) {
    this.id = options.entry.id;
    const c = options.config.consumer;
    this.consumer = consumerApi(options.follow, this.id, { id: c.id, credential: options.credential, role: c.role, leaseTtlSeconds: c.lease_ttl_seconds });
    this.retry = { attempts: 5, signal: options.signal, onRetry: (info) => options.log.warn('node request failed; retrying', { processor: this.id, ...info }) };
  }

  get current(): SinkState {
    return this.state;
  }

  private enter(state: SinkState): void {
    this.state = state;
    setState(this.options.metrics, this.id, state);
  }

  /** Runs until the signal aborts (resolves) or a failure no retry can cure (rejects, SinkStopError or the cause). */
  async run(): Promise<void> {
    const { signal, log } = this.options;
    for (let attempt = 1; !signal.aborted; attempt += 1) {
      const client = new pg.Client(this.options.pgConfig);
      client.on('error', (error) => log.warn('PostgreSQL connection error', { processor: this.id, ...errorFields(error) }));
      try {
        await client.connect();
        await this.lock(client);
        await this.session(client);
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (!transient(error)) {
          this.enter('stopped');
          throw error;
        }
        this.enter('retrying');
        this.options.metrics.reconnects.inc({ processor: this.id });
        const delayMs = backoffDelay({ initialMs: 250, maxMs: 30_000, jitter: 0.5 }, Math.min(attempt, 10), Math.random);
        log.warn('sink session failed; starting a new one from the cursor PostgreSQL holds', { processor: this.id, attempt, delayMs, ...errorFields(error) });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }

  /** Takes the advisory lock on the processor's tables, waiting a little for a killed sink's session to end. */
  private async lock(client: pg.Client): Promise<void> {
    const { schema } = this.options.config.postgres;
    const deadline = Date.now() + this.options.config.sink.lock_wait_seconds * 1000;
    while (!(await tryLockProcessor(client, schema, this.id))) {
      if (Date.now() > deadline || this.options.signal.aborted) {
        const holder = await lockHolder(client, schema, this.id);
        const who = holder ? ` (PostgreSQL backend pid ${holder.pid}, application '${holder.applicationName}', client ${holder.clientAddress ?? 'local socket'})` : '';
        throw new SinkStopError('conflict', `another sink holds processor '${this.id}' in schema '${schema}'${who}: run one sink per processor and schema`);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  private async processorInfo(): Promise<ProcessorInfo> {
    try {
      const status = await retryTransient(() => this.options.node.json<{ processor: ProcessorInfo }>(`/v1/processors/${encodeURIComponent(this.id)}/status`, { signal: AbortSignal.timeout(this.options.config.node.request_timeout_ms) }), this.retry);
      return status.processor;
    } catch (error) {
      if (error instanceof NodeHttpError && error.status === 404) throw new SinkStopError('not_found', `the node has no processor '${this.id}' (processors[].id): ${error.message}`);
      throw error;
    }
  }

  private mappingOf(info: ProcessorInfo): KindMapping {
    // A mapping declared in sink.toml (a user's kind) is the one used.
    if (this.options.entry.mapping.length > 0) return declaredMapping(info.kind, info.changeSchema, this.options.entry.mapping);
    const mapping = KIND_MAPPINGS.get(info.kind);
    if (!mapping) throw new SinkStopError('unsupported_capability', `processor '${this.id}' is of kind '${info.kind}', which the PostgreSQL sink has no built-in mapping for (it lands: ${[...KIND_MAPPINGS.keys()].join(', ')}): declare how its collections land with [[processors.mapping]] (examples/postgres-sink/sink.toml)`);
    if (mapping.changeSchema !== info.changeSchema) throw new SinkStopError('unsupported_capability', `processor '${this.id}' publishes change schema '${info.changeSchema}'; this sink reads '${mapping.changeSchema}' for kind '${info.kind}'`);
    return mapping;
  }

  private tablesOf(mapping: KindMapping): SinkTable[] {
    const { entry, config } = this.options;
    const known = mapping.collections.map((c) => c.collection);
    const unknown = entry.collections.filter((c) => !known.includes(c));
    if (unknown.length > 0) throw new SinkStopError('invalid_request', `processors '${this.id}' collections: ${unknown.join(', ')} is not a collection of kind '${mapping.kind}' (it has: ${known.join(', ')})`);
    const prefix = entry.table_prefix ?? defaultTablePrefix(this.id);
    return mapping.collections.filter((c) => entry.collections.length === 0 || entry.collections.includes(c.collection)).map((c) => {
      const name = `${prefix}${c.collection}`;
      if (name.length > MAX_TABLE_NAME) throw new SinkStopError('invalid_request', `table name '${name}' of processor '${this.id}' is longer than ${MAX_TABLE_NAME} characters: set a shorter processors.table_prefix`);
      return { collection: c.collection, mapping: c, schema: config.postgres.schema, name };
    });
  }

  /** Why the tables must be bootstrapped (again), or null when the cursor row and tables can be followed. */
  private async bootstrapReason(client: pg.Client, row: CursorRow | null, info: ProcessorInfo, tables: readonly SinkTable[]): Promise<string | null> {
    if (row === null) return 'first start: no cursor row';
    if (row.instance !== info.instance) return `instance changed: the tables hold '${row.instance}', the node serves '${info.instance}'`;
    if (row.kind !== info.kind) return `kind changed: ${row.kind} → ${info.kind}`;
    const stored = Object.entries(row.collections).map(([collection, state]) => `${collection}:${state.table}`).sort().join(',');
    const wanted = tables.map((t) => `${t.collection}:${t.name}`).sort().join(',');
    if (stored !== wanted) return `collections or table names changed: ${stored} → ${wanted}`;
    const { schema } = this.options.config.postgres;
    const result = await client.query<{ table_name: string; column_name: string }>('SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2::text[])', [schema, tables.map((t) => t.name)]);
    for (const table of tables) {
      const columns = new Set(result.rows.filter((r) => r.table_name === table.name).map((r) => r.column_name));
      if (columns.size === 0) return `table ${schema}.${table.name} is missing`;
      const missing = expectedColumns(table.mapping).filter((c) => !columns.has(c));
      if (missing.length > 0) throw new SinkStopError('conflict', `table ${schema}.${table.name} lacks the column(s) ${missing.join(', ')} (made by another version?): drop the table, or delete processor '${this.id}' from ${schema}.sink_cursors, to bootstrap again`);
    }
    return null;
  }

  private async session(client: pg.Client): Promise<void> {
    const { config, signal, log } = this.options;
    let info = await this.processorInfo();
    let mapping = this.mappingOf(info);
    let tables = this.tablesOf(mapping);
    let row = await readCursor(client, config.postgres.schema, this.id);
    let reason = await this.bootstrapReason(client, row, info, tables);
    for (;;) {
      if (reason !== null) {
        this.enter('bootstrapping');
        row = await bootstrap({
          pg: client, node: this.options.node, consumer: this.consumer, schema: config.postgres.schema, processor: info, tables,
          pageRows: config.sink.bootstrap_page_rows, retry: this.retry, log, metrics: this.options.metrics,
          progressIntervalMs: config.sink.progress_interval_ms, tty: this.options.tty, previousBootstraps: row?.bootstraps ?? 0, signal,
        }, reason);
      }
      this.enter('following');
      log.info('following the change feed', { processor: this.id, instance: row!.instance, consumer: this.consumer.settings.id, sequence: row!.sequence.toString() });
      const outcome = await this.follow(client, row!, mapping, tables);
      if (outcome.kind === 'aborted' || signal.aborted) return;
      this.options.metrics.resets.inc({ processor: this.id });
      if (config.sink.on_reset === 'stop') {
        throw new SinkStopError('reset_required', `processor '${this.id}': the node asks for a new snapshot (${outcome.reason}); sink.on_reset = "stop" leaves the tables at the stored sequence. Set on_reset = "rebootstrap", or delete its row from ${config.postgres.schema}.sink_cursors, to bootstrap again`);
      }
      log.warn('reset_required: bootstrapping again into fresh tables', { processor: this.id, reason: outcome.reason });
      info = await this.processorInfo();
      mapping = this.mappingOf(info);
      tables = this.tablesOf(mapping);
      reason = `reset_required: ${outcome.reason}`;
    }
  }

  /** Follows the consumer from `row` until the signal aborts or the node asks for a new snapshot. */
  private async follow(client: pg.Client, row: CursorRow, mapping: KindMapping, tables: readonly SinkTable[]): Promise<FollowOutcome> {
    const { config, metrics, log } = this.options;
    const labels = { processor: this.id };
    const byCollection = new Map(tables.map((t) => [t.collection, t]));
    const selected = new Set(byCollection.keys());
    const boundaries = new Map(Object.entries(row.collections).map(([collection, state]) => [collection, BigInt(state.boundary)]));
    let collections = row.collections;
    let sequence = row.sequence;
    let cursor = row.cursor;
    metrics.appliedSequence.set(labels, Number(sequence));
    const local = new AbortController();
    const signal = AbortSignal.any([this.options.signal, local.signal]);
    const changes = followConsumer({
      api: this.consumer, limit: config.consumer.batch_changes, idlePollMs: config.consumer.idle_poll_ms, signal,
      start: () => ({ position: 'cursor', cursor }),
      // A consumer that acknowledged past what PostgreSQL holds (a restored database, another sink) would skip changes.
      accept: (view) => view.instance === row.instance && BigInt(view.acknowledged.sequence) <= sequence,
      onReconnect: (info) => {
        metrics.reconnects.inc(labels);
        log.warn('consumer session failed; reconnecting', { processor: this.id, ...info });
      },
      onLimit: (limit) => log.warn('the node allows fewer changes per batch; using its maximum (limits.max_page_limit)', { processor: this.id, limit }),
    });
    const lag = setInterval(() => {
      this.consumer.head(AbortSignal.timeout(5000)).then((head) => {
        metrics.headSequence.set(labels, Number(head.sequence));
        metrics.lagChanges.set(labels, Math.max(0, Number(BigInt(head.sequence) - sequence)));
      }, () => undefined);
    }, 1000);
    // Acknowledgements run beside the next batch's transaction (each after its COMMIT); only the newest cursor waiting is sent.
    let acking: Promise<void> | null = null;
    let unacknowledged: string | null = null;
    const acknowledgeLatest = (ackCursor: string) => {
      unacknowledged = ackCursor;
      if (acking !== null) return;
      acking = (async () => {
        while (unacknowledged !== null) {
          const sending: string = unacknowledged;
          unacknowledged = null;
          await this.acknowledge(sending);
        }
        acking = null;
      })();
    };
    // The next batches are fetched while one transaction runs; behind, the batches held go in one transaction.
    const maxChanges = config.sink.max_transaction_changes;
    const prefetch = new Prefetch(changes, (batch: { data: readonly unknown[] }) => batch.data.length, maxChanges);
    // One transaction runs while the next is planned and its statements built: `planned` is where the tables will
    // be once the transactions sent so far commit; `sequence`/`cursor`/`collections` what PostgreSQL holds.
    let planned = { sequence, collections };
    let running: Promise<void> = Promise.resolve();
    try {
      for (;;) {
        // A failed transaction ends the wait for the next batch (caught up, that wait may be long).
        const failed = running.then(() => new Promise<never>(() => undefined));
        const taken = await Promise.race([prefetch.take(maxChanges), failed]);
        if (taken.kind === 'end') {
          await running;
          return taken.value;
        }
        const data = taken.batches.length === 1 ? taken.batches[0]!.data : taken.batches.flatMap((batch) => batch.data);
        const finalized = new Map(Object.entries(planned.collections).map(([collection, state]) => [collection, state.finalizedBlock ?? -1]));
        const plan = planPage(data, mapping, selected, { sequence: planned.sequence, boundaries, finalized });
        if (plan.skipped > 0) metrics.changesSkipped.inc(labels, plan.skipped);
        const prepared = prepareTransaction(byCollection, plan);
        const from = planned.sequence;
        const nextCollections = Object.fromEntries(Object.entries(planned.collections).map(([collection, state]) => {
          const block = plan.finalized.get(collection) ?? -1;
          return [collection, { ...state, finalizedBlock: block < 0 ? null : block }];
        }));
        if (plan.last !== null) planned = { sequence: plan.last.sequence, collections: nextCollections };
        const ackCursor = data[data.length - 1]!.cursor;
        // Only what the commit reports is kept past here: the plan's rows (and the batches) are garbage once the
        // statements are built, not held until the transaction behind the running one commits.
        const { operations, emittedAt } = plan;
        const previous = running;
        running = (async () => {
          await previous;
          if (prepared !== null) {
            const started = performance.now();
            await runTransaction(client, config.postgres.schema, this.id, prepared, from, nextCollections);
            const visible = Date.now();
            collections = nextCollections;
            sequence = prepared.to.sequence;
            cursor = prepared.to.cursor;
            metrics.transactionSeconds.observe(labels, (performance.now() - started) / 1000);
            metrics.transactions.inc(labels);
            for (const [operation, count] of Object.entries(operations)) if (count > 0) metrics.changesApplied.inc({ ...labels, operation }, count);
            for (const emitted of emittedAt) {
              const at = Date.parse(emitted);
              if (Number.isFinite(at)) metrics.commitToVisibleSeconds.observe(labels, Math.max(0, visible - at) / 1000);
            }
            metrics.appliedSequence.set(labels, Number(sequence));
          }
          acknowledgeLatest(ackCursor);
        })();
        running.catch(() => undefined);
        // At most one transaction waits behind the one running.
        await previous;
      }
    } finally {
      await running.catch(() => undefined);
      clearInterval(lag);
      await acking;
      local.abort();
      await prefetch.close();
      await changes.return({ kind: 'aborted', lastCursor: cursor }).catch(() => undefined);
    }
  }

  /** Acknowledges after COMMIT; a failed acknowledgement only widens the redelivery window (the next one covers it). */
  private async acknowledge(cursor: string): Promise<void> {
    try {
      await retryTransient(() => this.consumer.ack(cursor, AbortSignal.timeout(this.options.config.node.request_timeout_ms)), { attempts: 3 });
    } catch (error) {
      this.options.log.warn('acknowledgement failed; the changes after the last acknowledged one will be redelivered and skipped', { processor: this.id, ...errorFields(error) });
    }
  }
}
