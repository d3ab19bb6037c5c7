/**
 * The consensus p2p Req/Resp domain's `ssz_snappy` encoding (consensus-specs phase0 `p2p-interface.md`): one stream per
 * request; a request is `varint(ssz length) ‖ snappy frames(ssz)`; a response is zero or more chunks
 * `result byte ‖ context bytes (the fork digest, for protocols that have them) ‖ varint(ssz length) ‖ snappy frames`.
 * Result 0 is success; 1 InvalidRequest, 2 ServerError, 3 ResourceUnavailable carry an ErrorMessage; the first error
 * chunk ends the response. Lengths are bounded by the expected type before anything is decompressed.
 */
import type { PeerId } from '@libp2p/interface';
import type { ConsensusHost } from './host.js';
import { concat, decodeFrames, encodeFrames } from './snappy-frames.js';
import { ErrorMessage } from './light-client-ssz.js';

export const PROTOCOL_PREFIX = '/eth2/beacon_chain/req';
export const LIGHT_CLIENT_PROTOCOLS = {
  bootstrap: `${PROTOCOL_PREFIX}/light_client_bootstrap/1/ssz_snappy`,
  updatesByRange: `${PROTOCOL_PREFIX}/light_client_updates_by_range/1/ssz_snappy`,
  finalityUpdate: `${PROTOCOL_PREFIX}/light_client_finality_update/1/ssz_snappy`,
  optimisticUpdate: `${PROTOCOL_PREFIX}/light_client_optimistic_update/1/ssz_snappy`,
} as const;

/** `MAX_PAYLOAD_SIZE`: 10 MiB of uncompressed bytes in any chunk. */
export const MAX_PAYLOAD_SIZE = 10 * 2 ** 20;
export const MAX_REQUEST_LIGHT_CLIENT_UPDATES = 128;

export const RESULT = { success: 0, invalidRequest: 1, serverError: 2, resourceUnavailable: 3 } as const;

export class ReqRespError extends Error {
  override name = 'ReqRespError';
}

export function encodeVarint(value: number): Uint8Array {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Uint8Array.from(out);
}

/** An unsigned protobuf varint at `offset` (at most 10 bytes; values above 2^53 are refused as too large anyway). */
export function decodeVarint(input: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (offset + i >= input.length) throw new ReqRespError('a length prefix ends early');
    const byte = input[offset + i]!;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw new ReqRespError('a length prefix beyond any payload size');
      return { value, next: offset + i + 1 };
    }
    scale *= 0x80;
  }
  throw new ReqRespError('a length prefix longer than 10 bytes');
}

/** One SSZ payload: its length prefix and snappy frames. */
export function encodePayload(ssz: Uint8Array): Uint8Array {
  return concat([encodeVarint(ssz.length), encodeFrames(ssz)]);
}

/** A request's bytes → its SSZ bytes; the declared length must lie in [minSize, maxSize] and nothing may follow. */
export function decodeRequest(input: Uint8Array, minSize: number, maxSize: number): Uint8Array {
  const { value: length, next } = decodeVarint(input, 0);
  if (length < minSize || length > Math.min(maxSize, MAX_PAYLOAD_SIZE)) throw new ReqRespError(`a request of ${length} bytes (expected ${minSize}..${maxSize})`);
  const { data, next: end } = decodeFrames(input, next, length);
  if (end !== input.length) throw new ReqRespError('bytes after the request payload');
  return data;
}

export function encodeSuccessChunk(context: Uint8Array | null, ssz: Uint8Array): Uint8Array {
  return concat([Uint8Array.of(RESULT.success), context ?? new Uint8Array(0), encodePayload(ssz)]);
}

export function encodeErrorChunk(result: number, message: string): Uint8Array {
  const bytes = new TextEncoder().encode(message).subarray(0, 256);
  return concat([Uint8Array.of(result), encodePayload(ErrorMessage.serialize(bytes))]);
}

export interface ResponseChunk {
  readonly result: number;
  /** The context bytes (fork digest) of a success chunk of a protocol with context; null otherwise. */
  readonly context: Uint8Array | null;
  /** SSZ bytes (success), or the ErrorMessage text (error). */
  readonly payload: Uint8Array;
  readonly message?: string;
}

/**
 * The chunks of a whole response. Success chunks are bounded by `maxSize` (the type's largest SSZ size), error
 * chunks by 256 bytes; at most `maxChunks` success chunks are read; an error chunk ends the response.
 */
export function decodeResponse(input: Uint8Array, options: { contextBytes: boolean; maxSize: number; maxChunks: number }): ResponseChunk[] {
  const chunks: ResponseChunk[] = [];
  let at = 0;
  while (at < input.length) {
    const result = input[at]!;
    at += 1;
    let context: Uint8Array | null = null;
    if (result === RESULT.success && options.contextBytes) {
      if (at + 4 > input.length) throw new ReqRespError('a response chunk ends inside its context bytes');
      context = input.slice(at, at + 4);
      at += 4;
    }
    const { value: length, next } = decodeVarint(input, at);
    const bound = result === RESULT.success ? Math.min(options.maxSize, MAX_PAYLOAD_SIZE) : ErrorMessage.maxSize;
    if (length > bound) throw new ReqRespError(`a response chunk declares ${length} bytes (at most ${bound})`);
    const { data, next: end } = decodeFrames(input, next, length);
    at = end;
    if (result !== RESULT.success) {
      let message = '';
      try {
        message = new TextDecoder().decode(ErrorMessage.deserialize(data));
      } catch {
        message = '(an undecodable error message)';
      }
      chunks.push({ result, context: null, payload: data, message });
      break;
    }
    chunks.push({ result, context, payload: data });
    if (chunks.length > options.maxChunks) throw new ReqRespError(`more than the ${options.maxChunks} response chunks requested`);
  }
  return chunks;
}

/** Reads a stream's source to its end, at most `maxBytes` (a longer one is refused). */
export async function readAll(source: AsyncIterable<{ subarray(): Uint8Array } | Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of source) {
    const bytes = chunk instanceof Uint8Array ? chunk : chunk.subarray();
    total += bytes.length;
    if (total > maxBytes) throw new ReqRespError(`a stream longer than ${maxBytes} bytes`);
    parts.push(bytes);
  }
  return concat(parts);
}

export interface ExchangeLimits {
  readonly contextBytes: boolean;
  /** Largest SSZ payload of one chunk. */
  readonly maxSize: number;
  readonly maxChunks: number;
  /** Largest response stream read. */
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * One request on a new stream to `peer`: writes `wire` (an encoded request, or nothing), reads the response to its
 * end and decodes its chunks. A peer that has not finished within `timeoutMs` has its stream aborted.
 */
export async function exchange(host: ConsensusHost, peer: PeerId, protocol: string, wire: Uint8Array | null, limits: ExchangeLimits): Promise<ResponseChunk[]> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = limits.signal ? AbortSignal.any([limits.signal, timeout]) : timeout;
  const late = () => new ReqRespError(`no ${protocol} answer within ${limits.timeoutMs} ms`);
  const stream = await host.dialProtocol(peer, protocol, { signal });
  const onAbort = () => stream.abort(late());
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await stream.sink(wire ? [wire] : []);
    const bytes = await readAll(stream.source as AsyncIterable<{ subarray(): Uint8Array }>, limits.maxBytes);
    if (signal.aborted) throw late();
    return decodeResponse(bytes, { contextBytes: limits.contextBytes, maxSize: limits.maxSize, maxChunks: limits.maxChunks });
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
