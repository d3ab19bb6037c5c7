/**
 * ChangeEnvelope rendering (spec §2.3), once, at commit time: the stored bytes are what /changes
 * and /stream serve. Field order follows the spec table.
 */
import type { ChangeOperation } from '../../store/change-log.js';
import type { Finality } from '../../store/coverage.js';
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
}

export function renderEnvelope(input: EnvelopeInput): string {
  const head = JSON.stringify({
    apiVersion: '1',
    sequence: input.sequence.toString(),
    cursor: input.cursor,
    operation: input.operation,
    originKind: 'live',
    originId: 'live',
    publicationRevision: '1',
    chainId: input.chainId,
    block: input.block,
    finality: input.finality,
    kind: input.kind,
    schema: input.schema,
    key: input.key,
  });
  return `${head.slice(0, -1)},"data":${input.dataJson ?? 'null'},"emittedAt":${JSON.stringify(input.emittedAt)}}`;
}
