/**
 * Errors that cross a lane boundary carry a stable code from the spec's error list
 * (spec §7.1); api/errors.ts maps each code to its HTTP status and retryable flag.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'unsupported_capability'
  | 'range_incomplete'
  | 'source_unavailable'
  | 'query_too_expensive'
  | 'cursor_invalid'
  | 'cursor_expired'
  | 'processor_rebuilding'
  | 'finality_unavailable'
  | 'output_not_retained'
  | 'delivery_disabled'
  | 'reset_required'
  | 'conflict'
  | 'not_ready'
  | 'internal';

export class CodedError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'CodedError';
    this.code = code;
    this.details = details;
  }
}
