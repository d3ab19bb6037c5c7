/**
 * One `eth` session on an RLPx connection: the status handshake (network id, genesis and EIP-2124 fork id checked
 * by the caller's rule), requests with eth/66 request ids and a timeout each, answers to the peer's requests through
 * a handler, and block-range announcements. Malformed, oversized and unknown messages are counted and never thrown
 * into the connection: a malformed answer fails its request, anything else malformed is dropped.
 */
import type { Peer } from '@ethereumjs/devp2p';
import { DISCONNECT_REASON } from '@ethereumjs/devp2p';
import {
  decodeBlockRangeUpdate, decodeEth68Receipts, decodeGetBlockBodies, decodeGetBlockHeaders, decodeGetReceipts, decodeItemsResponse, decodeStatus,
  encodeBlockRangeUpdate, encodeGetBlockBodies, encodeGetBlockHeaders, encodeGetReceipts, encodeStatus, ETH_CODES, MAX_MESSAGE_BYTES, peekRequestId,
  type BlockRange, type EthStatus, type EthVersion, type GetBlockHeaders, type HashesRequest, type HeaderOrigin, type ItemsResponse,
} from './eth-messages.js';
import type { EthWireProtocol } from './eth-protocol.js';
import type { Hash } from '../eth/hex.js';

export class SessionError extends Error {
  constructor(readonly reason: 'timeout' | 'closed' | 'malformed' | 'handshake', message: string) {
    super(message);
    this.name = 'SessionError';
  }
}

/** What the session's owner answers to a peer's requests; each returns the response payload or null (not served). */
export interface EthRequestHandler {
  headers(request: GetBlockHeaders, version: EthVersion): Uint8Array | null;
  bodies(request: HashesRequest, version: EthVersion): Uint8Array | null;
  receipts(request: HashesRequest, version: EthVersion): Uint8Array | null;
}

export interface SessionCounters {
  malformed: number;
  oversized: number;
  unknown: number;
}

interface Pending {
  readonly code: number;
  readonly resolve: (response: ItemsResponse) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

/** Messages the node knows but has no use for after the merge (transaction gossip, block announcements). */
const IGNORED: ReadonlySet<number> = new Set([ETH_CODES.newBlockHashes, ETH_CODES.transactions, ETH_CODES.newBlock, ETH_CODES.newPooledTransactionHashes,
  ETH_CODES.getPooledTransactions, ETH_CODES.pooledTransactions]);

export class EthSession {
  readonly version: EthVersion;
  remoteStatus: EthStatus | null = null;
  /** The newest range the peer announced (status, then BlockRangeUpdate). */
  range: BlockRange | null = null;
  readonly counters: SessionCounters = { malformed: 0, oversized: 0, unknown: 0 };
  bytesIn = 0;
  private nextId = 1n;
  private readonly pending = new Map<bigint, Pending>();
  private statusWaiter: ((status: EthStatus | Error) => void) | null = null;
  private closed = false;
  onRange: ((range: BlockRange) => void) | null = null;

  constructor(readonly peer: Peer, readonly protocol: EthWireProtocol, private readonly handler: EthRequestHandler | null) {
    this.version = protocol.version;
    protocol.listen((code, payload, size) => this.receive(code, payload, size));
    peer.events.once('close', () => this.close(new SessionError('closed', 'the peer disconnected')));
  }

  /** Sends our status and waits for the peer's; `check` returns a refusal reason or null. */
  async handshake(local: EthStatus, timeoutMs: number, check: (remote: EthStatus) => string | null): Promise<EthStatus> {
    const remote = await new Promise<EthStatus>((resolve, reject) => {
      const timer = setTimeout(() => done(new SessionError('timeout', `no status within ${timeoutMs} ms`)), timeoutMs);
      const done = (value: EthStatus | Error) => {
        clearTimeout(timer);
        this.statusWaiter = null;
        if (value instanceof Error) reject(value);
        else resolve(value);
      };
      this.statusWaiter = done;
      this.protocol.send(ETH_CODES.status, encodeStatus({ ...local, version: this.version }));
    });
    const refusal = remote.version !== this.version ? `status version ${remote.version} on an eth/${this.version} session` : check(remote);
    if (refusal !== null) {
      this.disconnect(DISCONNECT_REASON.SUBPROTOCOL_ERROR);
      throw new SessionError('handshake', refusal);
    }
    this.remoteStatus = remote;
    if (remote.version === 69) this.range = { earliest: remote.earliest ?? 0, latest: remote.latest ?? 0, latestHash: remote.head };
    return remote;
  }

  getBlockHeaders(origin: HeaderOrigin, limit: number, skip: number, reverse: boolean, timeoutMs: number): Promise<ItemsResponse> {
    return this.request(ETH_CODES.getBlockHeaders, ETH_CODES.blockHeaders, timeoutMs, (requestId) => encodeGetBlockHeaders({ requestId, origin, limit, skip, reverse }));
  }

  getBlockBodies(hashes: readonly Hash[], timeoutMs: number): Promise<ItemsResponse> {
    return this.request(ETH_CODES.getBlockBodies, ETH_CODES.blockBodies, timeoutMs, (requestId) => encodeGetBlockBodies({ requestId, hashes }));
  }

  /** Receipts of each block in the stored eth/69 form, whichever version the session speaks. */
  getReceipts(hashes: readonly Hash[], timeoutMs: number): Promise<ItemsResponse> {
    return this.request(ETH_CODES.getReceipts, ETH_CODES.receipts, timeoutMs, (requestId) => encodeGetReceipts({ requestId, hashes }));
  }

  announceRange(range: BlockRange): void {
    if (this.version === 69 && !this.closed) this.protocol.send(ETH_CODES.blockRangeUpdate, encodeBlockRangeUpdate(range));
  }

  get inFlight(): number {
    return this.pending.size;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  disconnect(reason: DISCONNECT_REASON = DISCONNECT_REASON.DISCONNECT_REQUESTED): void {
    this.peer.disconnect(reason);
    this.close(new SessionError('closed', 'the session was closed'));
  }

  private request(code: number, answer: number, timeoutMs: number, encode: (id: bigint) => Uint8Array): Promise<ItemsResponse> {
    if (this.closed) return Promise.reject(new SessionError('closed', 'the session is closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new SessionError('timeout', `no answer to message 0x${code.toString(16)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { code: answer, resolve, reject, timer });
      try {
        this.protocol.send(code, encode(id));
      } catch (error) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(error as Error);
      }
    });
  }

  private close(error: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.statusWaiter?.(error);
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.pending.delete(id);
    }
  }

  private receive(code: number, payload: Uint8Array | null, size: number): void {
    this.bytesIn += payload?.length ?? 0;
    if (payload === null || payload.length > MAX_MESSAGE_BYTES) {
      // Announced above the limit (never uncompressed; its request, if any, times out) or arrived above it.
      this.counters.oversized++;
      if (payload !== null) this.failAnswer(payload, `an oversized answer (${size} bytes)`);
      return;
    }
    try {
      this.dispatch(code, payload);
    } catch (error) {
      this.counters.malformed++;
      this.failAnswer(payload, `a malformed message 0x${code.toString(16)}: ${(error as Error).message}`);
    }
  }

  private dispatch(code: number, payload: Uint8Array): void {
    switch (code) {
      case ETH_CODES.status: {
        const status = decodeStatus(payload);
        this.statusWaiter?.(status);
        return;
      }
      case ETH_CODES.blockHeaders:
      case ETH_CODES.blockBodies:
        return this.answer(code, decodeItemsResponse(payload, code === ETH_CODES.blockHeaders ? 'eth BlockHeaders' : 'eth BlockBodies'));
      case ETH_CODES.receipts:
        return this.answer(code, this.version === 68 ? decodeEth68Receipts(payload) : decodeItemsResponse(payload, 'eth/69 Receipts'));
      case ETH_CODES.getBlockHeaders: {
        const request = decodeGetBlockHeaders(payload);
        return this.serve(ETH_CODES.blockHeaders, this.handler?.headers(request, this.version) ?? null);
      }
      case ETH_CODES.getBlockBodies:
        return this.serve(ETH_CODES.blockBodies, this.handler?.bodies(decodeGetBlockBodies(payload), this.version) ?? null);
      case ETH_CODES.getReceipts:
        return this.serve(ETH_CODES.receipts, this.handler?.receipts(decodeGetReceipts(payload), this.version) ?? null);
      case ETH_CODES.blockRangeUpdate: {
        if (this.version !== 69) break;
        this.range = decodeBlockRangeUpdate(payload);
        this.onRange?.(this.range);
        return;
      }
      default:
        if (IGNORED.has(code)) return;
    }
    this.counters.unknown++;
  }

  private serve(code: number, response: Uint8Array | null): void {
    if (response !== null && !this.closed) this.protocol.send(code, response);
  }

  private answer(code: number, response: ItemsResponse): void {
    const pending = this.pending.get(response.requestId);
    if (!pending || pending.code !== code) {
      this.counters.unknown++;
      return;
    }
    this.pending.delete(response.requestId);
    clearTimeout(pending.timer);
    pending.resolve(response);
  }

  private failAnswer(payload: Uint8Array, what: string): void {
    const id = payload.length > MAX_MESSAGE_BYTES ? null : peekRequestId(payload);
    const pending = id === null ? undefined : this.pending.get(id);
    if (!pending || id === null) return;
    this.pending.delete(id);
    clearTimeout(pending.timer);
    pending.reject(new SessionError('malformed', `the peer sent ${what}`));
  }
}
