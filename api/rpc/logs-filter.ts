/**
 * Log filters as execution clients accept them (eth_getLogs, `logs` subscriptions): `address` one
 * address or a list (any of them), `topics` up to four positions, each null or [] (anything), one
 * topic, or a list (any of them). A block is scanned only when its header bloom may contain an
 * address and, at every constrained position, one of the topics.
 */
import { hexToBytes, type Hex } from '../../net/eth/hex.js';
import { keccak256 } from '../../net/eth/keccak.js';
import type { Log } from '../../net/eth/log.js';
import { argumentError, parseAddress } from './params.js';

export interface LogFilter {
  /** Lower-case addresses; empty: any address. */
  readonly addresses: readonly string[];
  /** Per position, lower-case topics (any of them); an empty position matches anything. */
  readonly topics: ReadonlyArray<readonly string[]>;
}

const MAX_TOPICS = 4;

function parseTopic(value: unknown, index: number): string {
  if (typeof value !== 'string' || !/^0[xX][0-9a-fA-F]{64}$/.test(value)) throw argumentError(index, `invalid topic ${JSON.stringify(value)}`);
  return `0x${value.slice(2).toLowerCase()}`;
}

/** The address and topic criteria of a filter object (the block range is the caller's). */
export function parseLogCriteria(filter: Readonly<Record<string, unknown>>, index: number): LogFilter {
  const rawAddress = filter.address;
  const addresses = rawAddress === undefined || rawAddress === null ? [] : Array.isArray(rawAddress) ? rawAddress.map((a) => parseAddress(a, index)) : [parseAddress(rawAddress, index)];
  const rawTopics = filter.topics;
  if (rawTopics !== undefined && rawTopics !== null && !Array.isArray(rawTopics)) throw argumentError(index, 'topics must be an array');
  const list = (rawTopics ?? []) as unknown[];
  if (list.length > MAX_TOPICS) throw argumentError(index, 'exceed max topics');
  const topics = list.map((position) => {
    if (position === null) return [];
    if (Array.isArray(position)) return position.filter((t) => t !== null).map((t) => parseTopic(t, index));
    return [parseTopic(position, index)];
  });
  return { addresses, topics };
}

export function logMatches(log: Log, filter: LogFilter): boolean {
  if (filter.addresses.length > 0 && !filter.addresses.includes(log.address)) return false;
  if (filter.topics.length > log.topics.length) return false;
  for (let i = 0; i < filter.topics.length; i++) {
    const wanted = filter.topics[i]!;
    if (wanted.length > 0 && !wanted.includes(log.topics[i]!)) return false;
  }
  return true;
}

/** The three bloom bits (byte index, mask) of one address or topic. */
type BloomProbe = ReadonlyArray<readonly [number, number]>;

function bloomProbe(value: string): BloomProbe {
  const hash = keccak256(hexToBytes(value));
  const bits: Array<[number, number]> = [];
  for (let i = 0; i < 6; i += 2) {
    const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
    bits.push([255 - (bit >> 3), 1 << (bit & 7)]);
  }
  return bits;
}

/** A bloom check compiled once per filter: false means the block certainly holds no matching log. */
export function compileBloomCheck(filter: LogFilter): (bloom: Uint8Array) => boolean {
  const groups: BloomProbe[][] = [];
  if (filter.addresses.length > 0) groups.push(filter.addresses.map(bloomProbe));
  for (const position of filter.topics) if (position.length > 0) groups.push(position.map(bloomProbe));
  const has = (bloom: Uint8Array, probe: BloomProbe) => probe.every(([index, mask]) => (bloom[index]! & mask) === mask);
  return (bloom) => groups.every((group) => group.some((probe) => has(bloom, probe)));
}

export function bloomBytes(bloom: Hex): Uint8Array {
  return hexToBytes(bloom, 256);
}
