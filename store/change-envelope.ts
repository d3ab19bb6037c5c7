/**
 * ChangeEnvelope rendering (spec §2.3): what /changes, /stream and consumer batches serve, rendered
 * where a change log is read (store/change-log.ts keeps compact groups). Field order follows the spec table.
 */
import type { Finality } from './coverage.js';
import type { Hex } from './chain-types.js';

export type ChangeOperation = 'apply' | 'undo' | 'finalized' | 'reset_required';

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
  const json = middleText(input, blockJson(input.block), chainId);
  lastMiddle = { operation: input.operation, originKind: input.originKind, originId: input.originId, chainId, block: input.block, finality: input.finality, kind: input.kind, schema: input.schema, json };
  return json;
}

type SharedFields = Pick<EnvelopeInput, 'operation' | 'originKind' | 'originId' | 'finality' | 'kind' | 'schema'>;

function middleText(input: SharedFields, blockText: string, chainId: number): string {
  return `"operation":"${input.operation}",`
    + `"originKind":"${input.originKind ?? 'live'}","originId":${input.originId === undefined ? '"live"' : JSON.stringify(input.originId)},"publicationRevision":"1","chainId":${JSON.stringify(chainId)},"block":${blockText},`
    + `"finality":${JSON.stringify(input.finality)},"kind":${JSON.stringify(input.kind)},"schema":${JSON.stringify(input.schema)},`;
}

/**
 * The envelope text before a group change's payload (through `"data":`), given its sequence, cursor, kind
 * and key; the payload and then the group's `tail` follow it.
 */
export type GroupHead = (sequence: bigint, cursor: string, kind: string, key: string | null) => string;

/**
 * The renderer of a group's changes (store/change-log.ts): they share everything but sequence, cursor, kind,
 * key and payload, so the shared fields are rendered once per kind, and the payload (stored as JSON) is
 * copied between `head` and `tail` as bytes. Byte-identical to renderEnvelope (tested).
 */
export function groupRender(shared: Omit<EnvelopeInput, 'sequence' | 'cursor' | 'chainId' | 'kind' | 'key' | 'dataJson'>, chainId: number): { readonly head: GroupHead; readonly tail: string } {
  const middles = new Map<string, string>();
  const blockText = shared.block === null ? 'null' : JSON.stringify(shared.block);
  const head: GroupHead = (sequence, cursor, kind, key) => {
    let middle = middles.get(kind);
    if (middle === undefined) {
      middle = middleText({ ...shared, kind }, blockText, chainId);
      middles.set(kind, middle);
    }
    return `{"apiVersion":"1","sequence":"${sequence}","cursor":"${cursor}",${middle}"key":${JSON.stringify(key)},"data":`;
  };
  return { head, tail: `,"emittedAt":${JSON.stringify(shared.emittedAt)}}` };
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
