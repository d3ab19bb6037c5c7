/**
 * The spec's errors (§7.1) as a kind throws them: a `CodedError` carries a code of the spec's list, a message that
 * says what to do next and optional details. It lives below every lane (`runtime/errors.ts`), so the API's error
 * model renders what a kind throws with the status and `retryable` flag of its code, as any other error.
 */
export { CodedError, type ErrorCode } from '../../../runtime/errors.js';
