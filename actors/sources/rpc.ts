/**
 * Lane `source`, kind `rpc`: follows an upstream Ethereum JSON-RPC endpoint. Every poll (every `pollIntervalMs`,
 * or at once when the optional WebSocket `newHeads` subscription announces a block) fetches the blocks the store
 * does not have yet — walking back by parent hash across reorganisations — verifies each one against its header,
 * records the branch in the chain tables, and then tells `chain` the new head.
 *
 * Accepts SourceInbox (messages.ts): ask `finalized` → `{ number, hash } | null`, the upstream's `finalized` block (the finality lane asks);
 *          an upstream failure answers with CodedError `source_unavailable`.
 * Sends to `chain`: `head { number, hash }` (HeadNotice, actors/chain/messages.ts) once the head's branch back to a recorded ancestor is
 *          verified and recorded; sent whenever the followed head changes, and once after every start.
 * Health: ready once the upstream head has been reached (not while catching up); degraded with the reason while
 *          following fails (upstream down, invalid material, a reorganisation deeper than `maxReorgDepth`); ready
 *          again by itself on recovery. Other errors (bugs, the store failing) crash the actor for its supervisor.
 *
 * `pooledBlobRoots` (default false) accepts anvil's non-canonical blob transactions root (anvil ≤ 1.7.1, see
 * net/rpc/pooled-blob-root.ts); set it only for such dev chains.
 *
 * Start: with an empty store (no canonical block yet) following begins at the upstream's finalized block or
 * `maxReorgDepth` below its head, whichever is higher (net/rpc/follow.ts), and catches up to the head in bounded
 * batches; the history before it is the job of the history lanes. Otherwise it resumes from the highest canonical
 * block. A branch that replaces the recorded chain from its first block (a store that began at an unfinalized block
 * the upstream then reorganised away) is recorded and announced like any reorganisation; the chain lane decides. The upstream URL is only ever logged redacted (no credentials, no query).
 */
import { defineActor, type ActorContext } from '../../runtime/actor.js';
import { CodedError } from '../../runtime/errors.js';
import { errorFields, redactUrl } from '../../runtime/log.js';
import { getBlockNumber, getCanonicalHash, recordBlocks } from '../../store/chain-material.js';
import { openStore, type Store } from '../../store/store.js';
import { EthFormatError } from '../../net/eth/errors.js';
import { bytesToHex, hexToBytes, type Hash } from '../../net/eth/hex.js';
import { createRpcClient, type RpcClient } from '../../net/rpc/client.js';
import { BlockUnavailableError, ReorgTooDeepError, UpstreamError, UpstreamFormatError } from '../../net/rpc/errors.js';
import { fetchFinalized, follow, type FollowResult } from '../../net/rpc/follow.js';
import type { BlockRef } from '../../store/chain-types.js';
import { subscribeNewHeads, type NewHeadsSubscription } from '../../net/rpc/new-heads.js';
import type { ChainInbox } from '../chain/messages.js';
import type { SourceInbox } from './messages.js';
import { canonicalBase, canonicalHead } from '../../store/chain-heads.js';
import { createRpcSourceMetrics, type RpcSourceMetrics } from './metrics.js';

export interface RpcSourceArgs {
  readonly url: string;
  readonly wsUrl: string | null;
  readonly pollIntervalMs: number;
  readonly dataDir: string;
  readonly maxReorgDepth: number;
  readonly requestTimeoutMs: number;
  readonly maxRetries: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Accept blob transactions roots in anvil's pooled form (anvil ≤ 1.7.1); dev chains only, default false. */
  readonly pooledBlobRoots?: boolean;
}

interface State {
  readonly store: Store;
  readonly client: RpcClient;
  readonly shutdown: AbortController;
  readonly waker: Waker;
  readonly subscription: NewHeadsSubscription | null;
  readonly loop: Promise<void>;
}

type Ctx = ActorContext<RpcSourceArgs>;

export default defineActor<State, RpcSourceArgs, SourceInbox>({
  init(ctx) {
    const args = ctx.args;
    const shutdown = new AbortController();
    const client = createRpcClient({
      url: args.url, timeoutMs: args.requestTimeoutMs, maxRetries: args.maxRetries,
      backoffInitialMs: args.backoffInitialMs, backoffMaxMs: args.backoffMaxMs, signal: shutdown.signal,
    });
    const store = openStore({ dataDir: args.dataDir });
    const waker = createWaker();
    const subscription = args.wsUrl === null ? null : subscribeNewHeads({
      url: args.wsUrl,
      onHead: () => waker.wake(),
      onError: (error) => ctx.log.warn('newHeads subscription failed; polling continues', errorFields(error)),
      reconnect: { initialMs: args.backoffInitialMs, maxMs: args.backoffMaxMs },
      handshakeTimeoutMs: args.requestTimeoutMs,
    });
    ctx.log.info('following upstream', { url: client.endpoint, newHeads: args.wsUrl === null ? null : redactUrl(args.wsUrl) });
    const loop = runFollower(ctx, store, client, waker, shutdown.signal, createRpcSourceMetrics(ctx.metrics));
    return { store, client, shutdown, waker, subscription, loop };
  },

  async handle(message, state) {
    if (message.type !== 'finalized') {
      throw new CodedError('invalid_request', `the rpc source does not accept '${message.type}'; it answers ask 'finalized'`);
    }
    try {
      return await fetchFinalized(state.client);
    } catch (error) {
      if (isSourceFailure(error)) throw new CodedError('source_unavailable', (error as Error).message);
      throw error;
    }
  },

  abort(state) {
    state.subscription?.close();
    state.shutdown.abort(new Error('rpc source aborted'));
  },

  async stop(state, ctx) {
    state.subscription?.close();
    state.shutdown.abort(new Error('rpc source stopping'));
    state.waker.wake();
    await state.loop.catch((error: unknown) => ctx.log.warn('follower ended with an error while stopping', errorFields(error)));
    await state.store.close();
  },
});

/**
 * The poll loop. Failures of the upstream or its material degrade the lane and are retried on the next poll; any
 * other error (a bug, the store failing) rejects the loop, which crashes the actor for its supervisor to restart.
 */
async function runFollower(ctx: Ctx, store: Store, client: RpcClient, waker: Waker, signal: AbortSignal, metrics: RpcSourceMetrics): Promise<void> {
  let localHead = canonicalHead(store);
  let announced: BlockRef | null = null;
  let healthy = false;
  let lastReason = '';
  while (!signal.aborted) {
    let behind = false;
    try {
      const result = await follow({
        client, localHead, base: canonicalBase(store), maxReorgDepth: ctx.args.maxReorgDepth, pooledBlobRoots: ctx.args.pooledBlobRoots === true,
        isKnown: (hash) => isRecorded(store, hash), canonicalHash: (number) => canonicalHashAt(store, number),
      });
      if (signal.aborted) break;
      await record(store, result, metrics);
      if (localHead === null) ctx.log.info('following begins', { number: result.head.number, hash: result.head.hash, behind: result.behind });
      localHead = result.head;
      if (announced?.hash !== result.head.hash) {
        await ctx.send<ChainInbox>('chain', { type: 'head', number: result.head.number, hash: result.head.hash });
        announced = result.head;
      }
      behind = result.behind;
      if (!healthy && !behind) {
        ctx.ready();
        ctx.log.info('following the upstream head', { number: result.head.number, hash: result.head.hash });
        healthy = true;
        lastReason = '';
      }
    } catch (error) {
      if (signal.aborted) break;
      if (!isSourceFailure(error)) throw error;
      const reason = (error as Error).message;
      metrics.failures.inc({ error: (error as Error).name });
      healthy = false;
      if (reason !== lastReason) {
        ctx.degraded(reason);
        ctx.log.warn('following the upstream failed; retrying every poll', errorFields(error));
        lastReason = reason;
      }
    }
    if (!behind) await waker.wait(ctx.args.pollIntervalMs);
  }
}

async function record(store: Store, result: FollowResult, metrics: RpcSourceMetrics): Promise<void> {
  if (result.branch.length > 0) await recordBlocks(store, result.branch.map((block) => block.material));
  metrics.recorded.inc(result.branch.length);
  if (result.reorged) metrics.reorgs.inc();
  metrics.head.set(result.head.number);
}

/** Errors that say the upstream (or what it served) is unusable right now, as opposed to bugs in this node. */
function isSourceFailure(error: unknown): boolean {
  return error instanceof UpstreamError || error instanceof UpstreamFormatError || error instanceof BlockUnavailableError
    || error instanceof ReorgTooDeepError || error instanceof EthFormatError;
}

function isRecorded(store: Store, hash: Hash): boolean {
  return getBlockNumber(store, hexToBytes(hash, 32)) !== undefined;
}

function canonicalHashAt(store: Store, number: number): Hash | undefined {
  const hash = getCanonicalHash(store, number);
  return hash ? bytesToHex(hash) : undefined;
}

interface Waker {
  /** Resolves after `ms`, or earlier when woken (a wake-up while not waiting skips the next wait). */
  wait(ms: number): Promise<void>;
  wake(): void;
}

function createWaker(): Waker {
  let pending = false;
  let release: (() => void) | null = null;
  return {
    wait(ms) {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          release = null;
          pending = false;
          resolve();
        }
        release = done;
      });
    },
    wake() {
      if (release) release();
      else pending = true;
    },
  };
}
