/**
 * The API bearer (spec §5): when `auth.token_file` names a token, every route that is not
 * operational needs `Authorization: Bearer <token>` — 401 `unauthorized` without one, 403
 * `forbidden` with another. The presented token is hashed and compared in constant time against
 * the configured token's hash (computed once), so neither its length nor its bytes leak through
 * timing; tokens are never logged or echoed.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpError } from '../errors.js';
import type { Handler } from '../http.js';

/** Throws 401/403 unless `authorization` (the raw header, '' when absent) carries the configured token. */
export type BearerCheck = (authorization: string | undefined) => void;

const SCHEME = /^bearer[ \t]+/i;
const CHALLENGE = { 'www-authenticate': 'Bearer realm="chain-node"' };

export function bearerCheck(token: string): BearerCheck {
  const expected = digest(token);
  return (authorization) => {
    if (authorization === undefined || authorization === '') {
      throw new HttpError('unauthorized', 'this route needs the API bearer: send Authorization: Bearer <token>', undefined, 401, CHALLENGE);
    }
    if (!SCHEME.test(authorization)) {
      throw new HttpError('unauthorized', 'the Authorization header must use the Bearer scheme', undefined, 401, CHALLENGE);
    }
    const presented = digest(authorization.replace(SCHEME, '').trim());
    if (!timingSafeEqual(presented, expected)) throw new HttpError('forbidden', 'the API bearer token is not valid for this node');
  };
}

/** Wraps a handler so it runs only after the bearer check passes; without a token the handler is returned as is. */
export function guarded(handler: Handler, check: BearerCheck | null): Handler {
  if (check === null) return handler;
  return (request) => {
    check(request.headers.authorization);
    return handler(request);
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
