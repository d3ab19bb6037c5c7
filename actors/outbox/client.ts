/**
 * The listeners' side of the `outbox` lane: the consumer writes of the API (api/aggregate/consumers/consumer-routes.ts)
 * as typed asks over the mailbox. A coded error passes through; a lane that does not answer is 503 `not_ready` (retryable).
 */
import type { ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import type { ConsumerWrites } from '../../api/aggregate/consumers/consumer-routes.js';
import type { OutboxInbox, OutboxReplies } from './messages.js';

export const OUTBOX_ACTOR = 'outbox';
const ASK_TIMEOUT_MS = 10_000;

export function consumerWrites(ctx: ActorContext<unknown>): ConsumerWrites {
  const ask = async <Tag extends keyof OutboxReplies>(message: Extract<OutboxInbox, { type: Tag }>): Promise<OutboxReplies[Tag]> => {
    try {
      return await ctx.ask<OutboxInbox, OutboxReplies[Tag]>(OUTBOX_ACTOR, message, ASK_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof CodedError) throw error;
      throw new CodedError('not_ready', `the consumer lane did not answer (${(error as Error).message}); retry shortly`);
    }
  };
  return {
    create: (creation) => ask({ type: 'consumer.create', ...creation }),
    remove: (ref) => ask({ type: 'consumer.delete', ...ref }),
    lease: (ref, redeliver) => ask({ type: 'consumer.lease', ...ref, redeliver }),
    deliver: (ref, limit) => ask({ type: 'consumer.deliver', ...ref, limit }),
    acknowledge: (ref, sequence, cursor) => ask({ type: 'consumer.ack', ...ref, sequence, cursor }),
  };
}
