/**
 * The one error table of the HTTP surface: every error code the node answers with, its HTTP
 * status and whether retrying the same request later can succeed (spec §7). Every route answers
 * errors through `errorBody`, in the spec's shape {error:{code,message,retryable,details?,requestId}}.
 *
 * Codes beyond the spec's list (§7.1 allows codes named by behaviour rules): `unauthorized` (401),
 * `forbidden` (403), `not_found` (404, unknown route, entity or processor), `method_not_allowed`
 * (405), `payload_too_large` (413, request body over the configured limit),
 * `unsupported_media_type` (415, a body not declared as JSON), `conflict` (409), `not_ready` (503).
 */
import { CodedError, type ErrorCode } from '../runtime/errors.js';

export interface ErrorRule {
  readonly status: number;
  readonly retryable: boolean;
}

export const ERROR_TABLE: Readonly<Record<ErrorCode | 'method_not_allowed', ErrorRule>> = {
  invalid_request: { status: 400, retryable: false },
  cursor_invalid: { status: 400, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  not_found: { status: 404, retryable: false },
  method_not_allowed: { status: 405, retryable: false },
  range_incomplete: { status: 409, retryable: false },
  processor_rebuilding: { status: 409, retryable: true },
  delivery_disabled: { status: 409, retryable: false },
  output_not_retained: { status: 409, retryable: false },
  conflict: { status: 409, retryable: false },
  cursor_expired: { status: 410, retryable: false },
  reset_required: { status: 410, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  unsupported_media_type: { status: 415, retryable: false },
  query_too_expensive: { status: 413, retryable: false },
  unsupported_capability: { status: 422, retryable: false },
  internal: { status: 500, retryable: true },
  source_unavailable: { status: 503, retryable: true },
  finality_unavailable: { status: 503, retryable: true },
  not_ready: { status: 503, retryable: true },
};

/** A CodedError that may override its table status (e.g. `query_too_expensive` as 429 for a concurrency budget). */
export class HttpError extends CodedError {
  constructor(code: ErrorCode | 'method_not_allowed', message: string, details?: Record<string, unknown>, readonly status?: number, readonly headers?: Record<string, string>) {
    super(code as ErrorCode, message, details);
    this.name = 'HttpError';
  }
}

export interface ErrorBody {
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly retryable: boolean;
    readonly details?: Record<string, unknown>;
    readonly requestId: string;
  };
}

export function errorStatus(error: CodedError): number {
  if (error instanceof HttpError && error.status !== undefined) return error.status;
  return ERROR_TABLE[error.code]?.status ?? 500;
}

/** Seconds a client waits before retrying a 429 or retryable 503, unless the error names its own `retry-after`. */
export const RETRY_AFTER_SECONDS = 1;

/** Any thrown value becomes a spec error body; unknown errors are `internal` and never leak their text. */
export function errorBody(error: unknown, requestId: string): { status: number; body: ErrorBody; headers: Record<string, string> } {
  if (error instanceof CodedError) {
    const status = errorStatus(error);
    const rule = ERROR_TABLE[error.code] ?? ERROR_TABLE.internal;
    const retryable = error.code === 'query_too_expensive' && status === 429 ? true : rule.retryable;
    const headers = error instanceof HttpError && error.headers ? { ...error.headers } : {};
    // RFC 9110 §10.2.3: tell a throttled or briefly unavailable client when to come back.
    if ((status === 429 || (status === 503 && retryable)) && headers['retry-after'] === undefined) headers['retry-after'] = String(RETRY_AFTER_SECONDS);
    return {
      status,
      body: { error: { code: error.code, message: error.message, retryable, ...(error.details ? { details: error.details } : {}), requestId } },
      headers,
    };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error; see the node log for this request id', retryable: true, requestId } }, headers: {} };
}
