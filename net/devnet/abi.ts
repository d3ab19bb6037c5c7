/** Just enough Solidity ABI encoding for the calldata and event data the devnet writes. */
import { bytesToHex, keccak256, type Address, type Hash, type Hex } from '../eth/index.js';

export type AbiValue =
  | { kind: 'uint'; value: bigint }
  | { kind: 'address'; value: Address }
  | { kind: 'uint[]'; value: readonly bigint[] }
  | { kind: 'address[]'; value: readonly Address[] }
  | { kind: 'bytes'; value: Uint8Array };

export const uint = (value: bigint): AbiValue => ({ kind: 'uint', value });
export const address = (value: Address): AbiValue => ({ kind: 'address', value });
export const uints = (value: readonly bigint[]): AbiValue => ({ kind: 'uint[]', value });
export const addresses = (value: readonly Address[]): AbiValue => ({ kind: 'address[]', value });
export const bytes = (value: Uint8Array): AbiValue => ({ kind: 'bytes', value });

/** One 32-byte word as 64 hex digits (no prefix). */
export function uintWord(value: bigint): string {
  if (value < 0n || value >= 1n << 256n) throw new RangeError(`${value} does not fit a uint256 word`);
  return value.toString(16).padStart(64, '0');
}

export function addressWord(value: Address): string {
  return value.slice(2).padStart(64, '0');
}

/** An indexed address as an event topic. */
export function addressTopic(value: Address): Hash {
  return `0x${addressWord(value)}`;
}

/** keccak256 of a signature, as hex: the event topic0. */
export function eventTopic(signature: string): Hash {
  return bytesToHex(keccak256(new TextEncoder().encode(signature)));
}

/** The first four bytes of keccak256 of a function signature, as 8 hex digits (no prefix). */
export function functionSelector(signature: string): string {
  return eventTopic(signature).slice(2, 10);
}

function tail(value: AbiValue): string {
  switch (value.kind) {
    case 'uint[]':
      return uintWord(BigInt(value.value.length)) + value.value.map(uintWord).join('');
    case 'address[]':
      return uintWord(BigInt(value.value.length)) + value.value.map(addressWord).join('');
    case 'bytes': {
      const hex = bytesToHex(value.value).slice(2);
      return uintWord(BigInt(value.value.length)) + hex.padEnd(Math.ceil(hex.length / 64) * 64, '0');
    }
    default:
      return '';
  }
}

/** The ABI encoding of a tuple of values (head words, then the tails of dynamic values). */
export function encodeAbi(values: readonly AbiValue[]): string {
  let head = '';
  let tails = '';
  const headSize = values.length * 32;
  for (const value of values) {
    if (value.kind === 'uint') head += uintWord(value.value);
    else if (value.kind === 'address') head += addressWord(value.value);
    else {
      head += uintWord(BigInt(headSize + tails.length / 2));
      tails += tail(value);
    }
  }
  return head + tails;
}

/** Calldata: a selector followed by the encoded arguments. */
export function encodeCall(selector: string, values: readonly AbiValue[]): Hex {
  return `0x${selector}${encodeAbi(values)}`;
}
