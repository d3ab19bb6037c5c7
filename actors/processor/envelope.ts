/**
 * ChangeEnvelope rendering (spec §2.3), once, at commit time: the stored bytes are what /changes
 * and /stream serve. Field order follows the spec table.
 */
import { encodeChangeValue, putChange, type ChangeOperation } from '../../store/change-log.js';
import type { Finality } from '../../store/coverage.js';
import { encodeCursor } from '../../store/cursor.js';
import type { BinaryTable } from '../../store/env.js';
import type { Hex } from '../../net/eth/hex.js';

export interface EnvelopeBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly parentHash: Hex;
  readonly timestamp: number;
}

export interface EnvelopeInput {
  readonly sequence: bigint;
  readonly cursor: string;
  readonly operation: ChangeOperation;
  readonly chainId: number;
  readonly block: EnvelopeBlock | null;
  readonly finality: Finality;
  readonly kind: string;
  readonly schema: string;
  readonly key: string | null;
  /** The payload, already JSON. */
  readonly dataJson: string | null;
  readonly emittedAt: string;
  /** Spec §2.3 `originKind`/`originId`; absent: `live`/`live` (a backfill subscription's stream names its own). */
  readonly originKind?: 'live' | 'live_recovery' | 'historical_backfill' | 'recompute';
  readonly originId?: string;
}

/**
 * Renders the envelope by concatenation: the output is byte-identical to JSON.stringify of the fields
 * in spec order (the test renders both), without an object and a full stringify per change. A block's
 * JSON is rendered once for all its changes (the last block object is remembered by identity).
 */
export function renderEnvelope(input: EnvelopeInput): string {
  return render(input, input.cursor, input.chainId);
}

function render(input: Omit<EnvelopeInput, 'cursor' | 'chainId'>, cursor: string, chainId: number): string {
  return `{"apiVersion":"1","sequence":"${input.sequence}","cursor":${JSON.stringify(cursor)},${middleJson(input, chainId)}"key":${JSON.stringify(input.key)},`
    + `"data":${input.dataJson ?? 'null'},"emittedAt":${emittedAtJson(input.emittedAt)}}`;
}

/**
 * The fields from `operation` to `schema`: the same for every change of one kind in one block (an erc20
 * block's hundreds of puts), so rendered once for consecutive changes that share them.
 */
let lastMiddle: { readonly operation: string; readonly originKind: string | undefined; readonly originId: string | undefined; readonly chainId: number; readonly block: EnvelopeBlock | null; readonly finality: Finality; readonly kind: string; readonly schema: string; readonly json: string } | null = null;

function middleJson(input: Omit<EnvelopeInput, 'cursor' | 'chainId'>, chainId: number): string {
  const last = lastMiddle;
  if (last !== null && last.block === input.block && last.kind === input.kind && last.operation === input.operation && last.finality === input.finality
    && last.schema === input.schema && last.chainId === chainId && last.originKind === input.originKind && last.originId === input.originId) return last.json;
  const json = `"operation":"${input.operation}",`
    + `"originKind":"${input.originKind ?? 'live'}","originId":${input.originId === undefined ? '"live"' : JSON.stringify(input.originId)},"publicationRevision":"1","chainId":${JSON.stringify(chainId)},"block":${blockJson(input.block)},`
    + `"finality":${JSON.stringify(input.finality)},"kind":${JSON.stringify(input.kind)},"schema":${JSON.stringify(input.schema)},`;
  lastMiddle = { operation: input.operation, originKind: input.originKind, originId: input.originId, chainId, block: input.block, finality: input.finality, kind: input.kind, schema: input.schema, json };
  return json;
}

let lastEmittedAt = '';
let lastEmittedAtJson = '""';

function emittedAtJson(emittedAt: string): string {
  if (emittedAt !== lastEmittedAt) {
    lastEmittedAtJson = JSON.stringify(emittedAt);
    lastEmittedAt = emittedAt;
  }
  return lastEmittedAtJson;
}

/** Where an envelope is written: a change log and the epoch, chain and instance (or subscription stream) its cursor names. */
export interface EnvelopeLog {
  readonly changes: BinaryTable;
  readonly epoch: bigint;
  readonly chainId: number;
  readonly instance: string;
}

/** Renders one envelope about `block` at `sequence`, with its cursor, and writes it into the log. */
export function putEnvelope(log: EnvelopeLog, input: Omit<EnvelopeInput, 'cursor' | 'chainId' | 'block'> & { readonly block: EnvelopeBlock }): void {
  const cursor = encodeCursor({ epoch: log.epoch, chainId: log.chainId, instance: log.instance, sequence: input.sequence, block: { number: input.block.number, hash: input.block.hash } });
  putChange(log.changes, input.sequence, encodeChangeValue(input.operation, cursor, render(input, cursor, log.chainId)));
}

let lastBlock: EnvelopeBlock | null = null;
let lastBlockJson = 'null';

function blockJson(block: EnvelopeBlock | null): string {
  if (block === null) return 'null';
  if (block !== lastBlock) {
    lastBlockJson = JSON.stringify(block);
    lastBlock = block;
  }
  return lastBlockJson;
}
