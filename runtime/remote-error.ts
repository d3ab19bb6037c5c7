import { CodedError, type ErrorCode } from './errors.js';
import type { RemoteError } from './protocol.js';

export class AskTimeoutError extends Error {
  constructor(to: string, type: string, timeoutMs: number) {
    super(`actor '${to}' did not answer '${type}' within ${timeoutMs} ms`);
    this.name = 'AskTimeoutError';
  }
}

export class ActorExitedError extends Error {
  constructor(to: string) {
    super(`actor '${to}' exited before answering`);
    this.name = 'ActorExitedError';
  }
}

export function toRemoteError(error: unknown): RemoteError {
  if (error instanceof CodedError) return { name: error.name, message: error.message, code: error.code, ...(error.details ? { details: error.details } : {}) };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

export function fromRemoteError(remote: RemoteError): Error {
  if (remote.code) return new CodedError(remote.code as ErrorCode, remote.message, remote.details);
  const error = new Error(remote.message);
  error.name = remote.name;
  return error;
}
