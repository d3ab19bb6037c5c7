/**
 * Typed errors of the JSON-RPC upstream source. Each has a stable `name` and a message that says what failed and
 * what to do; none ever carries the upstream URL's credentials or query (URLs pass through `redactUrl` first).
 */
import { BlockVerificationError } from '../eth/errors.js';
import type { BlockRef } from '../../store/chain-types.js';

/** How an upstream call failed: `transport` (connect, reset, DNS), `timeout`, `http` (non-200 status), `rpc` (a JSON-RPC error object), `response` (not JSON-RPC). */
export type UpstreamFailure = 'transport' | 'timeout' | 'http' | 'rpc' | 'response';

export interface UpstreamErrorDetails {
  readonly method: string;
  /** The endpoint without credentials, query or fragment. */
  readonly url: string;
  readonly failure: UpstreamFailure;
  /** Calls made, retries included. */
  readonly attempts: number;
  readonly status?: number;
  readonly code?: number;
  readonly detail: string;
}

const ADVICE: Record<Exclude<UpstreamFailure, 'http'>, string> = {
  transport: 'check that the upstream node is running and that [sources.live] url points at it',
  timeout: 'the upstream is overloaded or unreachable; raise the request timeout or use a closer node',
  rpc: 'the upstream refused the call; check that it supports this method (a full node, not pruned below the head)',
  response: 'the endpoint does not speak JSON-RPC 2.0; check [sources.live] url',
};

function advice(failure: UpstreamFailure, status: number | undefined): string {
  if (failure !== 'http') return ADVICE[failure];
  if (status === 401 || status === 403) return 'check the credentials in [sources.live] url';
  if (status === 429) return 'the provider rate-limits this node; raise the poll interval or use another plan';
  if (status !== undefined && status >= 500) return 'the upstream node or a proxy in front of it is failing';
  return 'check the endpoint path in [sources.live] url';
}

/** An upstream JSON-RPC call failed after its retries (or at once, for errors retrying cannot fix). */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
  readonly method: string;
  readonly url: string;
  readonly failure: UpstreamFailure;
  readonly attempts: number;
  readonly status: number | undefined;
  readonly code: number | undefined;
  /** What went wrong, without advice (the JSON-RPC error message, the HTTP status, the socket error). */
  readonly detail: string;

  constructor(details: UpstreamErrorDetails) {
    const what = details.failure === 'http' ? `HTTP ${details.status}` : details.failure === 'rpc' ? `error ${details.code}` : details.failure;
    const tries = details.attempts === 1 ? '1 attempt' : `${details.attempts} attempts`;
    super(`Upstream ${details.method} at ${details.url} failed (${what}) after ${tries}: ${details.detail}; ${advice(details.failure, details.status)}.`);
    this.method = details.method;
    this.url = details.url;
    this.failure = details.failure;
    this.attempts = details.attempts;
    this.status = details.status;
    this.code = details.code;
    this.detail = details.detail;
  }
}

/** Upstream JSON that is not the object it should be (a missing or malformed field). */
export class UpstreamFormatError extends Error {
  override name = 'UpstreamFormatError';
  constructor(readonly subject: string, readonly field: string, readonly detail: string) {
    super(`Upstream ${subject} field ${field}: ${detail}; the upstream node serves non-standard JSON-RPC, use another client or version.`);
  }
}

/** A block the walk-back needs is no longer served (the upstream reorganised again while we walked). */
export class BlockUnavailableError extends Error {
  override name = 'BlockUnavailableError';
  constructor(readonly block: string) {
    super(`Upstream no longer serves block ${block} while following its head; it probably reorganised again, the next poll retries.`);
  }
}

/**
 * Where a refused branch leaves the followed chain: right above a recorded block the upstream still has (`at`), or
 * below the recorded chain's first block (`below`: the upstream shares none of it).
 */
export type ForkPoint = { readonly at: BlockRef } | { readonly below: number };

/**
 * The upstream's new branch forks below the deepest reorganisation this source accepts. `fork` says where, when it
 * could be found out (see ForkPoint); without it the depth is a lower bound from the walk.
 */
export class ReorgTooDeepError extends Error {
  override name = 'ReorgTooDeepError';
  constructor(
    readonly localHead: BlockRef,
    readonly maxReorgDepth: number,
    readonly unknownBlock: BlockRef,
    readonly fork?: ForkPoint,
  ) {
    super(
      `Upstream branch ${forkDescription(localHead, unknownBlock, fork)}; the limit is max_reorg_depth = ${maxReorgDepth}. Nothing was recorded; ` +
      'check that the upstream serves the same chain, or raise max_reorg_depth if such reorganisations are expected.',
    );
  }

  /** Blocks of the followed chain the branch would undo: exact when the fork is at a known block, a lower bound otherwise. */
  get depth(): number {
    return forkDepth(this.localHead, this.unknownBlock, this.fork);
  }
}

function forkDepth(head: { readonly number: number }, unknown: { readonly number: number }, fork: ForkPoint | undefined): number {
  if (fork === undefined) return head.number - unknown.number + 1;
  return 'at' in fork ? head.number - fork.at.number : head.number - fork.below + 1;
}

function forkDescription(
  head: BlockRef,
  unknown: BlockRef,
  fork: ForkPoint | undefined,
): string {
  const depth = forkDepth(head, unknown, fork);
  const followed = `the followed head ${head.number} (${head.hash})`;
  if (fork === undefined) return `forks at least ${depth} blocks below ${followed}: its block ${unknown.number} (${unknown.hash}) has no recorded ancestor that near`;
  if ('at' in fork) return `forks at block ${fork.at.number} (${fork.at.hash}), ${depth} blocks below ${followed}`;
  return `shares no block with the recorded chain, which begins at block ${fork.below}: it forks below it, at least ${depth} blocks below ${followed}`;
}

/** An upstream URL that cannot be used; the message never repeats the URL, which may hold secrets. */
export class InvalidEndpointError extends Error {
  override name = 'InvalidEndpointError';
  constructor(readonly scheme: 'http' | 'ws', readonly detail: string) {
    super(`Invalid upstream ${scheme === 'http' ? 'JSON-RPC' : 'WebSocket'} endpoint: ${detail}; expected an absolute ${scheme === 'http' ? 'http:// or https://' : 'ws:// or wss://'} URL.`);
  }
}

/** A transactions root taken over blob transactions in their pooled network form (with sidecars), not the canonical one. */
export class PooledBlobRootError extends BlockVerificationError {
  override name = 'PooledBlobRootError';
  constructor(expected: string, actual: string, blockNumber: number, blockHash: string) {
    super('transactionsRoot', expected, actual, blockNumber, blockHash);
    this.message += ' The upstream commits to its blob transactions in their pooled network form, with sidecars, as anvil up to 1.7.1 does ' +
      '(foundry-rs/foundry#15132): enable pooledBlobRoots for such a dev chain, never for a real network.';
  }
}
