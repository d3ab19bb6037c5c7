/**
 * Request bodies of the consumer routes (spec §2.5), validated once at the edge. A problem is a
 * 400 `invalid_request` naming the field; the credential is never echoed.
 */
import { z } from 'zod';
import { bodyWith, type Request } from '../../http.js';
import { CONSUMER_ID, CONSUMER_ROLES, START_POSITIONS } from '../../../store/consumers.js';

/** Seven days: a longer lease would hold back pruning for a consumer that is long gone. */
export const MAX_LEASE_TTL_SECONDS = 7 * 24 * 3600;

const createBody = z.strictObject({
  id: z.string().regex(CONSUMER_ID, 'expected 1-128 characters from A-Z a-z 0-9 . _ ~ - starting with a letter or digit'),
  role: z.enum(CONSUMER_ROLES),
  start: z.strictObject({
    position: z.enum(START_POSITIONS),
    cursor: z.string().min(1).optional(),
  }).refine((start) => (start.position === 'cursor') === (start.cursor !== undefined), "start.cursor is given exactly when start.position is 'cursor'"),
  leaseTtlSeconds: z.number().int().min(1).max(MAX_LEASE_TTL_SECONDS),
  credential: z.string().min(16, 'expected a secret of at least 16 characters').max(1024),
});

export type CreateConsumerBody = z.infer<typeof createBody>;

const leaseBody = z.strictObject({ redeliver: z.boolean().default(false) });
const ackBody = z.strictObject({ cursor: z.string().min(1) });

export function parseCreateBody(request: Request): CreateConsumerBody {
  return bodyWith(createBody, request);
}

/** The lease body is optional: an empty body renews without redelivery. */
export function parseLeaseBody(request: Request): { redeliver: boolean } {
  return request.body.length === 0 ? { redeliver: false } : bodyWith(leaseBody, request);
}

export function parseAckBody(request: Request): { cursor: string } {
  return bodyWith(ackBody, request);
}

