/**
 * The change-feed cursor (spec §2.4): an opaque base64url token clients hand back to resume.
 *
 * Binary layout, format version 1 (all integers big-endian):
 *
 *   offset  size  field
 *   0       1     format version (1)
 *   1       1     flags: bit 0 = block present; other bits must be 0
 *   2       8     store epoch
 *   10      8     chain id
 *   18      8     processor instance id: first 8 bytes of sha256(instance string)
 *   26      8     change sequence
 *   34      8     block number          (only when the block flag is set)
 *   42      32    block hash            (only when the block flag is set)
 *   end-4   4     checksum: first 4 bytes of sha256 over every byte before it
 *
 * 38 bytes (51 characters) without a block, 78 bytes (104 characters) with one. The checksum
 * detects corruption, not forgery. Every future format must keep the version in byte 0 and the
 * checksum in the last 4 bytes, so an old binary can tell "damaged" from "newer format".
 */
import { createHash, hash } from 'node:crypto';
import { CodedError } from '../runtime/errors.js';
import { readU64 } from './keys.js';

export const CURSOR_FORMAT_VERSION = 1;

export interface CursorBlock {
  readonly number: number;
  readonly hash: Uint8Array | `0x${string}`;
}

export interface CursorFields {
  readonly epoch: bigint;
  readonly chainId: number;
  readonly instance: string;
  readonly sequence: bigint;
  readonly block?: CursorBlock;
}

/** What a decoder checks a cursor against: the store, chain and processor instance serving it. */
export interface CursorExpectation {
  readonly epoch: bigint;
  readonly chainId: number;
  readonly instance: string;
}

export interface DecodedCursor {
  readonly version: number;
  readonly epoch: bigint;
  readonly chainId: number;
  readonly instance: string;
  readonly sequence: bigint;
  readonly block?: { readonly number: number; readonly hash: `0x${string}` };
}

const FLAG_BLOCK = 0x01;
const CHECKSUM_BYTES = 4;
const HEADER_BYTES = 34;
const BLOCK_BYTES = 40;
const LENGTH_WITHOUT_BLOCK = HEADER_BYTES + CHECKSUM_BYTES;
const LENGTH_WITH_BLOCK = HEADER_BYTES + BLOCK_BYTES + CHECKSUM_BYTES;
/** Longer than any format this binary could be handed; refused before decoding. */
const MAX_TOKEN_CHARS = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const TOKEN_PREFIX_CHARS = 8;
const U64_MAX = (1n << 64n) - 1n;

export function encodeCursor(fields: CursorFields): string {
  assertU64('sequence', fields.sequence);
  const template = templateFor(fields);
  const bytes = Buffer.allocUnsafe(template.length);
  template.copy(bytes);
  bytes.writeBigUInt64BE(fields.sequence, 26);
  checksum(bytes.subarray(0, bytes.length - CHECKSUM_BYTES)).copy(bytes, bytes.length - CHECKSUM_BYTES);
  return bytes.toString('base64url');
}

/**
 * A cursor encoder for many sequences that share every other field (a block's changes): the fields are
 * checked and laid out once, and each call writes only the sequence and the checksum. Same tokens as
 * encodeCursor.
 */
export function cursorMinter(fields: Omit<CursorFields, 'sequence'>): (sequence: bigint) => string {
  const bytes = Buffer.from(templateFor({ ...fields, sequence: 0n }));
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  return (sequence) => {
    assertU64('sequence', sequence);
    bytes.writeBigUInt64BE(sequence, 26);
    checksum(body).copy(bytes, bytes.length - CHECKSUM_BYTES);
    return bytes.toString('base64url');
  };
}

/**
 * Every field but the sequence and the checksum, checked and laid out once for consecutive cursors that
 * share them: a lane encodes one cursor per change, and a block's hundreds of changes differ only in
 * their sequence.
 */
let lastTemplate: { readonly epoch: bigint; readonly chainId: number; readonly instance: string; readonly number: number | null; readonly hash: CursorBlock['hash'] | null; readonly bytes: Buffer } | null = null;

function templateFor(fields: CursorFields): Buffer {
  const last = lastTemplate;
  const block = fields.block;
  if (last !== null && last.epoch === fields.epoch && last.chainId === fields.chainId && last.instance === fields.instance
    && last.number === (block?.number ?? null) && sameHash(last.hash, block?.hash ?? null)) return last.bytes;
  assertU64('epoch', fields.epoch);
  assertSafeNonNegative('chainId', fields.chainId);
  const bytes = Buffer.alloc(block ? LENGTH_WITH_BLOCK : LENGTH_WITHOUT_BLOCK);
  bytes[0] = CURSOR_FORMAT_VERSION;
  bytes[1] = block ? FLAG_BLOCK : 0;
  bytes.writeBigUInt64BE(fields.epoch, 2);
  bytes.writeBigUInt64BE(BigInt(fields.chainId), 10);
  instanceId(fields.instance).copy(bytes, 18);
  if (block) {
    assertSafeNonNegative('block.number', block.number);
    bytes.writeBigUInt64BE(BigInt(block.number), 34);
    writeBlockHash(block.hash, bytes, 42);
  }
  // A caller's byte array may change after the call: the template keeps its own copy.
  const hash = block === undefined ? null : typeof block.hash === 'string' ? block.hash : Uint8Array.from(block.hash);
  lastTemplate = { epoch: fields.epoch, chainId: fields.chainId, instance: fields.instance, number: block?.number ?? null, hash, bytes };
  return bytes;
}

function sameHash(a: CursorBlock['hash'] | null, b: CursorBlock['hash'] | null): boolean {
  if (a === b) return true;
  if (a === null || b === null) return false;
  if (typeof a === 'string' || typeof b === 'string') return typeof a === typeof b && a === b;
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * Decodes a client's cursor and checks it belongs to `expect`. Throws CodedError:
 * `cursor_invalid` when it is not a cursor or is damaged; `reset_required` when it is a sound
 * cursor of another format version, store epoch, chain or processor instance.
 */
export function decodeCursor(token: string, expect: CursorExpectation): DecodedCursor {
  const bytes = tokenBytes(token);
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  if (!checksum(body).equals(bytes.subarray(bytes.length - CHECKSUM_BYTES))) {
    throw invalid(token, 'cursor is corrupted (checksum mismatch)');
  }
  const version = bytes[0];
  if (version !== CURSOR_FORMAT_VERSION) {
    throw resetRequired(token, `incompatible cursor format (version ${version}; this node reads version ${CURSOR_FORMAT_VERSION})`, 'format_version');
  }
  const flags = bytes[1] ?? 0;
  const hasBlock = flags === FLAG_BLOCK;
  if ((flags !== 0 && !hasBlock) || bytes.length !== (hasBlock ? LENGTH_WITH_BLOCK : LENGTH_WITHOUT_BLOCK)) {
    throw invalid(token, 'cursor is malformed');
  }
  checkBelongs(token, bytes, expect);
  const decoded: DecodedCursor = {
    version,
    epoch: expect.epoch,
    chainId: expect.chainId,
    instance: expect.instance,
    sequence: readU64(bytes, 26),
  };
  if (!hasBlock) return decoded;
  const blockNumber = readU64(bytes, 34);
  if (blockNumber > BigInt(Number.MAX_SAFE_INTEGER)) throw invalid(token, 'cursor block number is out of range');
  return { ...decoded, block: { number: Number(blockNumber), hash: `0x${bytes.subarray(42, 74).toString('hex')}` } };
}

/**
 * The block number of a cursor this node wrote (its own change log's), null when it names no block.
 * No checks: a client's cursor goes through decodeCursor.
 */
export function cursorBlockNumber(cursor: string): number | null {
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.length !== LENGTH_WITH_BLOCK || bytes[1] !== FLAG_BLOCK) return null;
  return Number(bytes.readBigUInt64BE(34));
}

function checkBelongs(token: string, bytes: Buffer, expect: CursorExpectation): void {
  if (readU64(bytes, 2) !== expect.epoch) {
    throw resetRequired(token, 'cursor belongs to another store epoch (the store was recreated or restored)', 'store_epoch');
  }
  const chainId = readU64(bytes, 10);
  if (chainId !== BigInt(expect.chainId)) {
    throw resetRequired(token, `cursor belongs to chain ${chainId}, this node serves chain ${expect.chainId}`, 'chain_id', {
      cursorChainId: chainId.toString(),
      chainId: expect.chainId,
    });
  }
  if (!bytes.subarray(18, 26).equals(instanceId(expect.instance))) {
    throw resetRequired(token, `cursor belongs to another processor instance than ${expect.instance}`, 'processor_instance', {
      instance: expect.instance,
    });
  }
}

function tokenBytes(token: string): Buffer {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_CHARS || !BASE64URL.test(token)) {
    throw invalid(String(token), 'cursor is not a base64url token');
  }
  const bytes = Buffer.from(token, 'base64url');
  // Non-canonical spellings (stray bits in the last character) would decode to the same bytes.
  if (bytes.toString('base64url') !== token) throw invalid(token, 'cursor is not a canonical base64url token');
  if (bytes.length < 2 + CHECKSUM_BYTES) throw invalid(token, 'cursor is too short');
  return bytes;
}

/** 64-bit id of a processor instance: a cursor of any other instance fails to match (up to a 2^-64 collision). */
function instanceId(instance: string): Buffer {
  let id = instanceIds.get(instance);
  if (id === undefined) {
    id = createHash('sha256').update(instance, 'utf8').digest().subarray(0, 8);
    // Instances are the configured processors: a handful. The bound only guards against misuse.
    if (instanceIds.size >= 1024) instanceIds.clear();
    instanceIds.set(instance, id);
  }
  return id;
}

/** Instance ids by instance name: every change a lane commits encodes a cursor with the same one. */
const instanceIds = new Map<string, Buffer>();

function checksum(body: Uint8Array): Buffer {
  // One-shot digest: no Hash object per cursor (a lane encodes one per change).
  return hash('sha256', body, 'buffer').subarray(0, CHECKSUM_BYTES);
}

/** Writes the 32-byte block hash at `offset`. */
function writeBlockHash(hash: Uint8Array | string, bytes: Buffer, offset: number): void {
  if (typeof hash === 'string') {
    if (hash.length !== 66 || !HASH_HEX.test(hash)) throw new RangeError('cursor block hash must be 0x followed by 64 hex digits');
    bytes.write(hash.slice(2), offset, 32, 'hex');
    return;
  }
  if (hash.length !== 32) throw new RangeError(`cursor block hash must be 32 bytes, got ${hash.length}`);
  bytes.set(hash, offset);
}

const HASH_HEX = /^0x[0-9a-fA-F]{64}$/;

function assertU64(name: string, value: bigint): void {
  if (value < 0n || value > U64_MAX) throw new RangeError(`cursor ${name} must fit in 64 bits, got ${value}`);
}

function assertSafeNonNegative(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`cursor ${name} must be a non-negative safe integer, got ${value}`);
}

/** Error details name the cursor by a short prefix only; the whole token is never echoed. */
function tokenDetails(token: string): Record<string, unknown> {
  return { cursorPrefix: token.length > TOKEN_PREFIX_CHARS ? `${token.slice(0, TOKEN_PREFIX_CHARS)}…` : token };
}

function invalid(token: string, message: string): CodedError {
  return new CodedError('cursor_invalid', message, tokenDetails(token));
}

function resetRequired(token: string, message: string, reason: string, extra: Record<string, unknown> = {}): CodedError {
  return new CodedError('reset_required', message, { ...tokenDetails(token), reason, ...extra });
}
