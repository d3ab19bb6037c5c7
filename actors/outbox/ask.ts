/** How a listener asks the `outbox` lane: a coded error passes through; a lane that does not answer is 503 `not_ready` (retryable). */
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import type { OutboxMessage } from './messages.js';

export const OUTBOX_ACTOR = 'outbox';
const ASK_TIMEOUT_MS = 10_000;

export function outboxAsker(ctx: ActorContext<unknown>): <Reply>(message: OutboxMessage) => Promise<Reply> {
  return async <Reply>(message: OutboxMessage): Promise<Reply> => {
    try {
      return await ctx.ask<Reply>(OUTBOX_ACTOR, message, ASK_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof CodedError) throw error;
      throw new CodedError('not_ready', `the consumer lane did not answer (${(error as Error).message}); retry shortly`);
    }
  };
}
