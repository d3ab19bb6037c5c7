/**
 * History by the execution clients' raw methods: `debug_getRawBlock(n)` (the block's RLP `[header, transactions,
 * uncles, withdrawals?]`) and `debug_getRawReceipts(n)` (each receipt's consensus encoding, `type || rlp([status,
 * cumulativeGasUsed, bloom, logs])`), both hex in the JSON-RPC answer. geth, reth, erigon and nethermind serve them
 * (execution-apis `debug_` getters), and so does this node. A block in this form is ~0.54× the bytes of its JSON
 * (`eth_getBlockByNumber(n, true)` + `eth_getBlockReceipts(n)`, on mainnet-shaped blocks) and needs no field-by-field conversion: the header
 * and body are cut from the block's RLP, and each receipt loses its bloom to become the eth/69 item the chain
 * tables store (`[type, status, cumulativeGasUsed, logs]`). The material is then verified exactly as every other
 * block's (`verifyBlockMaterialBytes`: hash, transactions, withdrawals and receipts roots with the blooms
 * recomputed from the logs, gas), so the upstream's blooms are never trusted.
 *
 * The answer's body is read as bytes: a small JSON reader (below) finds each answer's hex strings by their quotes
 * (`JSON.parse` would scan every character of them: ~0.9 ms for a 440 KB string) and hands each span to Node's hex
 * decoder; only short strings (the `jsonrpc` field, an error's message) become JavaScript strings of their own.
 */
import { BlockVerificationError, EthFormatError } from '../eth/errors.js';
import type { Hash } from '../eth/hex.js';
import { splitBlockRlp } from '../eth/block-parts.js';
import { receiptsToEth69 } from '../eth/consensus-receipts.js';
import { verifyBlockMaterialBytes } from '../eth/verify-material.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import { HistoryBlockError, type HistoryBlock } from './history-block.js';

/** How an rpc history source asks for blocks: the raw `debug_` getters, or `eth_getBlockByNumber` + `eth_getBlockReceipts`. */
export type HistoryEncoding = 'raw' | 'json';

/** The two raw calls of one block, in the order a batch sends them. */
export const RAW_BLOCK_METHOD = 'debug_getRawBlock';
export const RAW_RECEIPTS_METHOD = 'debug_getRawReceipts';

/** A hex string of the body: its digits (after `0x`) lie at `start`…`end`. */
class HexSpan {
  constructor(readonly start: number, readonly end: number) {}
}

/** Not what the raw methods answer; the batch is resolved on the lane's own path, which names the problem. */
class Malformed extends Error {}

/**
 * The bytes a hex span of the body spells; throws Malformed on an odd length or a non-hex digit. Node's native hex
 * decoder (through a one-byte-per-character string) is ~1.4× a JavaScript table loop here; it stops at the first
 * pair that is not hex, so a short result is how a bad digit shows.
 */
function decodeSpan(body: Buffer, span: HexSpan): Buffer {
  const digits = span.end - span.start;
  if (digits % 2 !== 0) throw new Malformed();
  const out = Buffer.from(body.toString('latin1', span.start, span.end), 'hex');
  if (out.length !== digits / 2) throw new Malformed();
  return out;
}

/**
 * A JSON reader over bytes for JSON-RPC answers: objects, arrays, numbers and literals as `JSON.parse` makes them;
 * a string that starts with `0x` as a HexSpan (its digits are checked when decoded); any other string decoded.
 * Throws Malformed on anything that is not JSON.
 */
class ByteJson {
  private at = 0;
  constructor(private readonly b: Uint8Array) {}

  document(): unknown {
    const value = this.value();
    this.space();
    if (this.at !== this.b.length) throw new Malformed();
    return value;
  }

  private space(): void {
    const b = this.b;
    while (this.at < b.length) {
      const c = b[this.at]!;
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.at++;
    }
  }

  private value(): unknown {
    this.space();
    const c = this.b[this.at];
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (c === 0x22) return this.string();
    return this.scalar();
  }

  private object(): Record<string, unknown> {
    this.at++;
    const out: Record<string, unknown> = {};
    this.space();
    if (this.b[this.at] === 0x7d) {
      this.at++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.b[this.at] !== 0x22) throw new Malformed();
      const key = this.string();
      if (typeof key !== 'string') throw new Malformed();
      this.space();
      if (this.b[this.at++] !== 0x3a) throw new Malformed();
      out[key] = this.value();
      this.space();
      const next = this.b[this.at++];
      if (next === 0x7d) return out;
      if (next !== 0x2c) throw new Malformed();
    }
  }

  private array(): unknown[] {
    this.at++;
    const out: unknown[] = [];
    this.space();
    if (this.b[this.at] === 0x5d) {
      this.at++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.space();
      const next = this.b[this.at++];
      if (next === 0x5d) return out;
      if (next !== 0x2c) throw new Malformed();
    }
  }

  private string(): string | HexSpan {
    const b = this.b;
    const start = this.at + 1;
    // The closing quote: the first one not escaped by an odd run of backslashes.
    let end = b.indexOf(0x22, start);
    let escaped = false;
    for (;;) {
      if (end < 0) throw new Malformed();
      let slashes = 0;
      while (b[end - 1 - slashes] === 0x5c) slashes++;
      if (slashes > 0) escaped = true;
      if (slashes % 2 === 0) break;
      end = b.indexOf(0x22, end + 1);
    }
    this.at = end + 1;
    if (!escaped && end - start >= 2 && b[start] === 0x30 && b[start + 1] === 0x78) return new HexSpan(start + 2, end);
    try {
      return JSON.parse(Buffer.from(b.buffer, b.byteOffset + start - 1, end - start + 2).toString('utf8')) as string;
    } catch {
      throw new Malformed();
    }
  }

  private scalar(): unknown {
    const b = this.b;
    const start = this.at;
    while (this.at < b.length) {
      const c = b[this.at]!;
      if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) break;
      this.at++;
    }
    if (this.at === start) throw new Malformed();
    try {
      return JSON.parse(Buffer.from(b.buffer, b.byteOffset + start, this.at - start).toString('latin1'));
    } catch {
      throw new Malformed();
    }
  }
}

/** One block's material from its raw block RLP and its receipts' consensus encodings. */
export interface RawMaterial {
  readonly hash: Hash;
  readonly parentHash: Hash;
  readonly material: BlockMaterial;
}

/**
 * Block `number`'s verified material from its raw block and raw receipts: header and body cut from the block's RLP,
 * each receipt re-framed as its eth/69 item, all verified against the header. Throws HistoryBlockError naming the
 * block and why (a malformed encoding, the wrong block, a verification mismatch).
 */
export function rawBlockMaterial(number: number, block: Uint8Array, receipts: readonly Uint8Array[]): RawMaterial {
  try {
    const { header, body } = splitBlockRlp(block);
    const eth69 = receiptsToEth69(receipts);
    const verified = verifyBlockMaterialBytes({ header, body, receipts: eth69 });
    if (verified.header.number !== number) throw new HistoryBlockError(number, `the upstream answered with block ${verified.header.number}`);
    const hash = Buffer.from(verified.hash.slice(2), 'hex');
    return { hash: verified.hash, parentHash: verified.header.parentHash, material: { number, hash, header, body, receipts: eth69 } };
  } catch (error) {
    if (error instanceof BlockVerificationError) throw new HistoryBlockError(number, `verification failed: ${error.field} mismatch (header says ${error.expected}, material gives ${error.actual})`);
    if (error instanceof EthFormatError) throw new HistoryBlockError(number, `malformed raw material: ${error.message}`);
    throw error;
  }
}

interface Response {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

/**
 * A raw batch's answer body (calls in `ids` order: block, receipts, block, receipts, …, for `from`…`to`) → its
 * blocks, each verified. Null when anything is not as it must be (an error object, a null answer, a malformed
 * string, a block that fails verification): the history lane then resolves the answer on its own path
 * (`resolveRawAnswers`), which throws the error naming the block.
 */
export function convertRawBody(bytes: Uint8Array, ids: readonly number[], from: number, to: number): HistoryBlock[] | null {
  try {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    const body = new ByteJson(bytes).document();
    if (!Array.isArray(body)) return null;
    const byId = new Map<unknown, Response>();
    for (const entry of body as Response[]) if (typeof entry === 'object' && entry !== null) byId.set(entry.id, entry);
    const blocks: HistoryBlock[] = [];
    for (let i = 0; i <= to - from; i++) {
      const block = byId.get(ids[2 * i]);
      const receipts = byId.get(ids[2 * i + 1]);
      if (!block || !receipts || !(block.result instanceof HexSpan) || !Array.isArray(receipts.result)) return null;
      const receiptBytes = (receipts.result as unknown[]).map((r) => {
        if (!(r instanceof HexSpan)) throw new Malformed();
        return decodeSpan(text, r);
      });
      const raw = rawBlockMaterial(from + i, decodeSpan(text, block.result), receiptBytes);
      blocks.push({ number: from + i, hash: raw.hash, parentHash: raw.parentHash, material: raw.material });
    }
    return blocks;
  } catch {
    return null;
  }
}

/** Hex text → bytes for `resolveRawAnswers`, naming what is wrong. */
function hexAnswer(number: number, value: unknown, what: string): Uint8Array {
  if (typeof value !== 'string' || !/^0x([0-9a-fA-F]{2})*$/.test(value)) throw new HistoryBlockError(number, `${what} is not hex-encoded bytes`);
  return Buffer.from(value.slice(2), 'hex');
}

/** One block's two raw answers (already parsed) → its verified material, or HistoryBlockError saying why not. */
export function resolveRawAnswers(number: number, block: unknown, receipts: unknown): HistoryBlock {
  if (block === null || block === undefined) throw new HistoryBlockError(number, 'the upstream does not have this block');
  if (receipts === null || receipts === undefined) throw new HistoryBlockError(number, `the upstream did not serve its receipts (${RAW_RECEIPTS_METHOD} answered null)`);
  if (!Array.isArray(receipts)) throw new HistoryBlockError(number, `${RAW_RECEIPTS_METHOD} did not answer with an array`);
  const raw = rawBlockMaterial(number, hexAnswer(number, block, RAW_BLOCK_METHOD), receipts.map((r, i) => hexAnswer(number, r, `receipt ${i} of ${RAW_RECEIPTS_METHOD}`)));
  return { number, hash: raw.hash, parentHash: raw.parentHash, material: raw.material };
}
