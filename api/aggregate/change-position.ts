/**
 * Where a change reader resumes: the sequence of the last change the client already has. Shared by
 * `/changes` and `/stream`, so both refuse the same cursors the same way:
 *
 *   no cursor                         → before the earliest retained change
 *   damaged / not a cursor            → `cursor_invalid` (400)
 *   another store, chain or instance  → `reset_required` (410; a terminal SSE event on streams)
 *   below the retained tail           → `cursor_expired` (410; a terminal SSE event on streams)
 *   beyond the head                   → `cursor_invalid` (400): no store of this epoch wrote it
 */
import { CodedError } from '../../runtime/errors.js';
import { decodeCursor } from '../../store/cursor.js';
import type { ChangeBounds } from './processor-reader.js';

export interface CursorOwner {
  readonly epoch: bigint;
  readonly chainId: number;
  readonly instance: string;
}

export function resumePosition(token: string | undefined, owner: CursorOwner, bounds: ChangeBounds): bigint {
  if (token === undefined) return bounds.tail === null ? bounds.head : bounds.tail - 1n;
  const { sequence } = decodeCursor(token, owner);
  if (sequence > bounds.head) {
    throw new CodedError('cursor_invalid', `the cursor names change ${sequence}, beyond this log's head ${bounds.head}`, { head: bounds.head.toString() });
  }
  const expired = bounds.tail === null ? sequence < bounds.head : sequence + 1n < bounds.tail;
  if (expired) {
    throw new CodedError('cursor_expired', `changes after ${sequence} are no longer retained; take a snapshot and resubscribe`, {
      retainedFrom: bounds.tail === null ? null : bounds.tail.toString(),
      action: 'snapshot and resubscribe',
    });
  }
  return sequence;
}
