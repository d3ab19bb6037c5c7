/**
 * Artifact reads (spec §2.9, §4.5), from the store in the listener:
 *
 *   GET /v1/processors/{p}/artifacts/status                          retained bounds, logical footprint, budget, admission
 *   GET /v1/processors/{p}/artifacts/{blockNumber}                   one retained artifact (its decoded deltas as `payload`)
 *   GET /v1/processors/{p}/artifacts/export?fromBlock&toBlock&limit  one page, `application/vnd.node.processor-artifacts`
 *
 * The export body is NDJSON: a header line, then one line per artifact in ascending block order. `x-node-artifact-digest`
 * is sha256 over the map identity (chain, kind, version, options, delta schema, payload encoding), the ordering, the
 * requested and exported ranges and every artifact's block hash and payload checksum — the same chain and
 * configuration give the same digest on every run. `x-node-artifact-complete` is `false` when another page is needed
 * (`x-node-artifact-next-from-block` names its start) or the retained range has a gap in the requested range.
 *
 * A processor with `retention = "none"`, and a block or range with no retained artifact, answer 409 `output_not_retained`.
 */
import { createHash } from 'node:crypto';
import { HttpError } from '../errors.js';
import type { Request } from '../http.js';
import type { Route } from '../routes.js';
import { ARTIFACT_ENCODING, ARTIFACT_MEDIA_TYPE, claimsOf, getRetained, readTotals, retainedBounds, retainedRange, usageOf, type ArtifactRecord } from '../../store/artifacts.js';
import { readProgress } from '../../store/coverage.js';
import type { ProcessorTables } from '../../store/store.js';
import type { AggregateContext } from './aggregate-context.js';
import { kindInfo, type ConfiguredProcessor } from './configured-processors.js';
import { blockNumberParam, optionalBlockNumber, pageLimit } from './query-params.js';
import { processorTables } from './processor-reader.js';

const EXPORT_FORMAT = 'chain-data-node.processor-artifacts';

/** The processor of the request, which must retain artifacts (409 `output_not_retained` otherwise). */
export function retainingProcessor(context: AggregateContext, id: string): ConfiguredProcessor {
  const processor = context.processors.byId(id);
  const retention = processor.artifacts?.retention ?? 'none';
  if (retention === 'none') {
    throw new HttpError('output_not_retained', `processor '${processor.id}' keeps no artifacts ([processors.artifacts] retention = "none"); set retention = "window" or "full" and reprocess the blocks (a rebuild or a materialization job) to keep them`, { processor: processor.id, retention, action: 'rebuild' });
  }
  return processor;
}

function tablesOf(context: AggregateContext, processor: ConfiguredProcessor): ProcessorTables | null {
  return processorTables(context.store, processor.instance);
}

/** Canonical JSON (sorted keys) of the kind's options: part of the map identity. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function mapIdentity(context: AggregateContext, processor: ConfiguredProcessor) {
  const info = kindInfo(processor);
  return {
    chainId: context.chainId, kind: info.kind, version: info.version, deltaSchema: info.deltaSchema ?? null, encoding: ARTIFACT_ENCODING,
    optionsDigest: createHash('sha256').update(canonicalJson(processor.options ?? {})).digest('hex'),
  };
}

function statusBody(context: AggregateContext, processor: ConfiguredProcessor, tables: ProcessorTables | null) {
  const config = processor.artifacts!;
  const totals = tables ? readTotals(tables.artifacts) : null;
  const bounds = tables ? retainedBounds(tables.artifacts) : null;
  const progress = tables ? readProgress(tables.state) : null;
  const peers = context.processors.all.filter((p) => (p.artifacts?.retention ?? 'none') !== 'none').map((p) => tablesOf(context, p)?.artifacts).filter((t) => t !== undefined);
  const usage = usageOf(peers);
  const blocked = progress?.state === 'degraded' && progress.stateReason !== null && progress.stateReason.includes('[budgets.artifacts]');
  return {
    processor: processor.id, instance: processor.instance, ...mapIdentity(context, processor),
    retention: config.retention, windowBlocks: config.retention === 'window' ? config.windowBlocks : null, replayFrom: config.replayFrom,
    retained: bounds, retainedCount: totals?.retainedCount ?? 0, retainedBytes: String(totals?.retainedBytes ?? 0),
    complete: bounds !== null && totals !== null && totals.retainedCount === bounds.toBlock - bounds.fromBlock + 1,
    pending: { count: totals?.pendingCount ?? 0, bytes: String(totals?.pendingBytes ?? 0) },
    finalizedThrough: progress?.finalizedNumber ?? null,
    budget: { maxBytes: String(config.maxBytes), maxPendingBlocks: config.maxPendingBlocks, usedBytes: String(usage.bytes), pendingBlocks: usage.pending },
    admission: { blocked, reason: blocked ? progress!.stateReason : null },
  };
}

function artifactBody(context: AggregateContext, processor: ConfiguredProcessor, tables: ProcessorTables, record: ArtifactRecord): string {
  const head = {
    processor: processor.id, instance: processor.instance, ...mapIdentity(context, processor),
    blockNumber: record.number, blockHash: record.hash, parentHash: record.parentHash, timestamp: record.timestamp, finality: 'finalized',
    checksum: `sha256:${record.checksum}`, bytes: String(record.bytes), owners: claimsOf(tables.artifacts, record.number).map((o) => ({ ownerKind: o.ownerKind, ...(o.ownerId ? { ownerId: o.ownerId } : {}) })),
  };
  // The payload is canonical JSON already: served as stored.
  return `${JSON.stringify(head).slice(0, -1)},"payload":${record.payload.toString('utf8')}}`;
}

function oneArtifact(context: AggregateContext, processor: ConfiguredProcessor, raw: string) {
  const number = blockNumberParam(raw, 'blockNumber');
  const tables = tablesOf(context, processor);
  const record = tables ? getRetained(tables.artifacts, number) : undefined;
  if (!tables || !record) {
    const finalized = tables ? readProgress(tables.state).finalizedNumber : null;
    if (finalized === null || number > finalized) {
      throw new HttpError('not_found', `block ${number} is not finalized for processor '${processor.id}' (finalized through ${finalized ?? 'none'}): artifacts are kept for finalized blocks`, { processor: processor.id, blockNumber: number, finalizedThrough: finalized });
    }
    throw new HttpError('output_not_retained', `processor '${processor.id}' retains no artifact of block ${number} (never processed here, outside the retention window or released)`, { processor: processor.id, blockNumber: number, retained: tables ? retainedBounds(tables.artifacts) : null, action: 'rebuild' });
  }
  return { body: Buffer.from(artifactBody(context, processor, tables, record)), contentType: 'application/json' };
}

function exportPage(context: AggregateContext, processor: ConfiguredProcessor, request: Request) {
  const query = request.query;
  const limit = pageLimit(query, context.limits);
  const tables = tablesOf(context, processor);
  const bounds = tables ? retainedBounds(tables.artifacts) : null;
  const fromBlock = optionalBlockNumber(query, 'fromBlock') ?? bounds?.fromBlock;
  const toBlock = optionalBlockNumber(query, 'toBlock') ?? bounds?.toBlock;
  if (fromBlock !== undefined && toBlock !== undefined && fromBlock > toBlock) throw new HttpError('invalid_request', `'fromBlock' ${fromBlock} is after 'toBlock' ${toBlock}`, { fromBlock, toBlock });
  const records = tables && fromBlock !== undefined && toBlock !== undefined ? [...retainedRange(tables.artifacts, fromBlock, toBlock, limit + 1)] : [];
  if (records.length === 0) {
    throw new HttpError('output_not_retained', `processor '${processor.id}' retains no artifact in the requested range`, { processor: processor.id, requested: fromBlock === undefined ? null : { fromBlock, toBlock }, retained: bounds, action: 'rebuild' });
  }
  const more = records.length > limit;
  const page = more ? records.slice(0, limit) : records;
  const first = page[0]!.number;
  const last = page[page.length - 1]!.number;
  const gapFree = first === fromBlock && last - first + 1 === page.length;
  const complete = !more && gapFree && last === toBlock;
  const identity = mapIdentity(context, processor);
  const digest = createHash('sha256');
  digest.update(`${EXPORT_FORMAT}/1\n${canonicalJson(identity)}\nordering=ascending_block_number\nrequested=${fromBlock}-${toBlock}\nexported=${first}-${last}\n`);
  const lines = [JSON.stringify({ format: EXPORT_FORMAT, formatVersion: 1, processor: processor.id, ...identity, requested: { fromBlock, toBlock }, exported: { fromBlock: first, toBlock: last }, count: page.length, complete })];
  for (const record of page) {
    digest.update(`${record.number} ${record.hash} ${record.checksum}\n`);
    lines.push(`{"blockNumber":${record.number},"blockHash":"${record.hash}","parentHash":"${record.parentHash}","timestamp":${record.timestamp},"checksum":"sha256:${record.checksum}","payload":${record.payload.toString('utf8')}}`);
  }
  return {
    body: Buffer.from(`${lines.join('\n')}\n`), contentType: ARTIFACT_MEDIA_TYPE,
    headers: {
      'x-node-artifact-digest': `sha256:${digest.digest('hex')}`, 'x-node-artifact-complete': String(complete),
      ...(more ? { 'x-node-artifact-next-from-block': String(records[limit]!.number) } : {}),
    },
  };
}

export function artifactRoutes(context: AggregateContext): Route[] {
  return [{
    // One pattern for status, export and a block number (a number is never `status` or `export`).
    method: 'get', pattern: '/v1/processors/:processor/artifacts/:item', open: false,
    handler: (request) => {
      const processor = retainingProcessor(context, request.params[0] ?? '');
      const item = request.params[1] ?? '';
      if (item === 'status') return { body: statusBody(context, processor, tablesOf(context, processor)) };
      if (item === 'export') return exportPage(context, processor, request);
      return oneArtifact(context, processor, item);
    },
  }];
}
