/**
 * The frames of the change stream that are not stored changes (spec §4.8): the `hello` frame that
 * opens every connection, the comment heartbeat, and the terminal `reset_required` event. None of
 * them has an `id:` line, so none can become a resume cursor.
 */
import type { ProcessorCoverage } from '../../store/coverage.js';
import type { ProcessorDescriptor } from '../aggregate/configured-processors.js';
import { API_VERSION } from '../aggregate/status-routes.js';
import { SseChunk } from './sse-encoding.js';

export const HEARTBEAT_FRAME = Buffer.from(':heartbeat\n\n', 'latin1');
/** The heartbeat as a chunk: deflated once for every gzip stream there will be. */
export const HEARTBEAT = new SseChunk(HEARTBEAT_FRAME);

function eventFrame(event: string, data: unknown): Buffer {
  return Buffer.from(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`, 'utf8');
}

export function helloFrame(chainId: number, processor: ProcessorDescriptor, coverage: ProcessorCoverage): Buffer {
  return eventFrame('hello', { apiVersion: API_VERSION, chainId, processor, coverage });
}

export interface ResetReason {
  readonly code: string;
  readonly message: string;
  readonly details?: Record<string, unknown> | undefined;
}

/**
 * A reset_required ChangeEnvelope: change-scoped fields describe the stream's position (the current
 * head sequence) and the reason; `cursor` is null because no position may be substituted for the
 * refused one; `coverage` is the current-coverage hint of spec §2.3.
 */
export function resetRequiredFrame(input: {
  chainId: number;
  processor: ProcessorDescriptor;
  head: bigint;
  coverage: ProcessorCoverage;
  reason: ResetReason;
}): Buffer {
  return eventFrame('reset_required', {
    apiVersion: API_VERSION,
    sequence: input.head.toString(),
    cursor: null,
    operation: 'reset_required',
    originKind: 'live',
    originId: 'live',
    publicationRevision: '1',
    chainId: input.chainId,
    block: null,
    finality: 'included',
    kind: 'reset_required',
    schema: input.processor.changeSchema,
    key: null,
    data: { code: input.reason.code, message: input.reason.message, ...(input.reason.details ? { details: input.reason.details } : {}) },
    coverage: input.coverage,
    emittedAt: new Date().toISOString(),
  });
}
