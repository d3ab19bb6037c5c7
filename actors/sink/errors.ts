/**
 * Why a sink stops rather than retries (the project's one error base, runtime/errors.ts): each message says what
 * happened and what to do. Transient failures (the node, the network, PostgreSQL restarting) are retried instead,
 * and recognised by `isTransientPostgresError` and the client's `isTransient`.
 */
import { CodedError, type ErrorCode } from '../../runtime/errors.js';

export class SinkStopError extends CodedError {
  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(code, message, details);
    this.name = 'SinkStopError';
  }
}

/** SQLSTATE classes a reconnect can cure: connection exceptions, operator intervention (shutdown), insufficient resources, serialization and deadlock. */
const TRANSIENT_SQLSTATE = /^(08|57P|53|40001|40P01)/;

/** True for a PostgreSQL failure a new connection may cure (a lost connection, a server restarting), false for an SQL error. */
export function isTransientPostgresError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return TRANSIENT_SQLSTATE.test(code);
  // No SQLSTATE: a socket error (ECONNREFUSED, ECONNRESET…) or pg's own "Connection terminated" errors.
  return typeof code === 'string' || /connection|terminated|timeout|ECONN|EPIPE/i.test(error.message);
}
