/**
 * JSON-RPC parameter parsing, validated once at the edge with geth's rules and messages
 * ("invalid argument N: …"): quantities without leading zeros, 32-byte hashes, block tags.
 */
import { hexToBytes } from '../../net/eth/hex.js';
import { invalidParams } from './rpc-errors.js';

export type BlockTag = 'latest' | 'pending' | 'earliest' | 'safe' | 'finalized';
export type BlockSelector = { readonly tag: BlockTag } | { readonly number: number };
export type BlockSelectorOrHash = BlockSelector | { readonly hash: Uint8Array };

const TAGS: ReadonlySet<string> = new Set(['latest', 'pending', 'earliest', 'safe', 'finalized']);

export function argumentError(index: number, detail: string): Error {
  return invalidParams(`invalid argument ${index}: ${detail}`);
}

/** The positional parameters: at most `max`, the first `required` present (geth's count rules). */
export function expectParams(params: readonly unknown[], required: number, max: number): void {
  if (params.length > max) throw invalidParams(`too many arguments, want at most ${max}`);
  for (let i = 0; i < required; i++) if (params[i] === undefined || params[i] === null) throw invalidParams(`missing value for required argument ${i}`);
}

/** A hex quantity that fits 64 bits (block numbers), as a safe JavaScript number. */
export function parseQuantity(value: unknown, index: number): number {
  if (typeof value !== 'string') throw argumentError(index, `json: cannot unmarshal ${jsonType(value)} into Go value of type hexutil.Uint64`);
  if (!/^0[xX]/.test(value)) throw argumentError(index, 'hex string without 0x prefix');
  const digits = value.slice(2);
  if (digits.length === 0) throw argumentError(index, 'hex string "0x"');
  if (digits.length > 1 && digits[0] === '0') throw argumentError(index, 'hex number with leading zero digits');
  if (!/^[0-9a-fA-F]+$/.test(digits)) throw argumentError(index, 'invalid hex string');
  if (digits.length > 16) throw argumentError(index, 'hex number > 64 bits');
  const number = Number.parseInt(digits, 16);
  if (!Number.isSafeInteger(number)) throw argumentError(index, 'block number beyond 2^53');
  return number;
}

export function parseHash(value: unknown, index: number): Uint8Array {
  if (typeof value !== 'string') throw argumentError(index, `json: cannot unmarshal ${jsonType(value)} into Go value of type common.Hash`);
  if (!/^0[xX]/.test(value)) throw argumentError(index, 'json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash');
  if (value.length !== 66) throw argumentError(index, `hex string has length ${value.length - 2}, want 64 for common.Hash`);
  try {
    return hexToBytes(`0x${value.slice(2)}`, 32);
  } catch {
    throw argumentError(index, 'json: cannot unmarshal invalid hex string into Go value of type common.Hash');
  }
}

export function parseAddress(value: unknown, index: number): string {
  if (typeof value !== 'string' || !/^0[xX][0-9a-fA-F]{40}$/.test(value)) throw argumentError(index, `invalid address ${JSON.stringify(value)}`);
  return `0x${value.slice(2).toLowerCase()}`;
}

export function parseBool(value: unknown, index: number): boolean {
  if (typeof value !== 'boolean') throw argumentError(index, `json: cannot unmarshal ${jsonType(value)} into Go value of type bool`);
  return value;
}

export function parseBlockSelector(value: unknown, index: number): BlockSelector {
  if (typeof value === 'string' && TAGS.has(value)) return { tag: value as BlockTag };
  return { number: parseQuantity(value, index) };
}

/** A block number or tag, a block hash, or the object forms `{blockNumber}` / `{blockHash}` (EIP-1898). */
export function parseBlockSelectorOrHash(value: unknown, index: number): BlockSelectorOrHash {
  if (typeof value === 'string' && value.length === 66) return { hash: parseHash(value, index) };
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const object = value as Record<string, unknown>;
    if (object.blockHash !== undefined && object.blockNumber !== undefined) throw argumentError(index, 'cannot specify both BlockHash and BlockNumber, choose one or the other');
    if (object.blockHash !== undefined) return { hash: parseHash(object.blockHash, index) };
    if (object.blockNumber !== undefined) return parseBlockSelector(object.blockNumber, index);
    throw argumentError(index, 'invalid block number or hash');
  }
  return parseBlockSelector(value, index);
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : typeof value;
}
