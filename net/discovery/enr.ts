/**
 * EIP-778 node records (`enr:` + unpadded base64url of `rlp([signature, seq, k, v, ...])`, identity scheme "v4"):
 * decoded and their signature checked (secp256k1 over keccak256(rlp([seq, k, v, ...])) with the record's compressed
 * key). Written here rather than taken from @ethereumjs/devp2p 10.0.0, whose ENR reader fails the EIP's own vector.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { RlpDecodeError } from '../eth/errors.js';
import { bytesToHex, type Hex } from '../eth/hex.js';
import { keccak256 } from '../eth/keccak.js';
import { decodeRlp, encodeRlp, type RlpItem } from '../eth/rlp.js';

export interface NodeRecord {
  readonly seq: bigint;
  /** keccak256 of the uncompressed public key: the discovery node id. */
  readonly nodeId: Hex;
  /** 64-byte uncompressed public key without its 0x04 prefix: the RLPx node id. */
  readonly publicKey: Uint8Array;
  readonly ip: string | null;
  readonly tcp: number | null;
  readonly udp: number | null;
  /** The raw key/value pairs (e.g. `eth` for the fork id), keyed by name. */
  readonly pairs: ReadonlyMap<string, RlpItem>;
}

export const MAX_RECORD_BYTES = 300;

export class NodeRecordError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NodeRecordError';
  }
}

function port(value: RlpItem | undefined): number | null {
  if (!(value instanceof Uint8Array) || value.length === 0 || value.length > 2) return null;
  return value.length === 1 ? value[0]! : (value[0]! << 8) | value[1]!;
}

function ip4(value: RlpItem | undefined): string | null {
  return value instanceof Uint8Array && value.length === 4 ? [...value].join('.') : null;
}

export function decodeNodeRecord(text: string): NodeRecord {
  if (!text.startsWith('enr:')) throw new NodeRecordError('a node record starts with "enr:"');
  const bytes = Buffer.from(text.slice(4), 'base64url');
  if (bytes.length > MAX_RECORD_BYTES) throw new NodeRecordError(`a node record is at most ${MAX_RECORD_BYTES} bytes, this one ${bytes.length}`);
  let item: RlpItem;
  try {
    item = decodeRlp(new Uint8Array(bytes), 'node record');
  } catch (error) {
    throw new NodeRecordError((error as RlpDecodeError).message);
  }
  if (!Array.isArray(item) || item.length < 2 || item.length % 2 !== 0) throw new NodeRecordError('a node record is [signature, seq, key, value, ...]');
  const [signature, seqBytes, ...kvs] = item;
  if (!(signature instanceof Uint8Array) || !(seqBytes instanceof Uint8Array)) throw new NodeRecordError('signature and seq are byte strings');
  const pairs = new Map<string, RlpItem>();
  let previous = '';
  for (let i = 0; i < kvs.length; i += 2) {
    const key = kvs[i];
    if (!(key instanceof Uint8Array)) throw new NodeRecordError('record keys are byte strings');
    const name = new TextDecoder().decode(key);
    if (name <= previous && i > 0) throw new NodeRecordError('record keys must be sorted and unique');
    previous = name;
    pairs.set(name, kvs[i + 1]!);
  }
  const id = pairs.get('id');
  if (!(id instanceof Uint8Array) || new TextDecoder().decode(id) !== 'v4') throw new NodeRecordError('only the "v4" identity scheme is known');
  const compressed = pairs.get('secp256k1');
  if (!(compressed instanceof Uint8Array) || compressed.length !== 33) throw new NodeRecordError('a v4 record has a 33-byte secp256k1 key');
  const content = encodeRlp([seqBytes, ...kvs] as never);
  let valid = false;
  try {
    valid = signature.length === 64 && secp256k1.verify(signature, keccak256(content), compressed, { prehash: false, lowS: false });
  } catch {
    valid = false;
  }
  if (!valid) throw new NodeRecordError('the record signature does not verify');
  const publicKey = secp256k1.Point.fromBytes(compressed).toBytes(false).subarray(1);
  let seq = 0n;
  for (const byte of seqBytes) seq = (seq << 8n) | BigInt(byte);
  return { seq, nodeId: bytesToHex(keccak256(publicKey)), publicKey, ip: ip4(pairs.get('ip')), tcp: port(pairs.get('tcp')), udp: port(pairs.get('udp')), pairs };
}

export interface NodeRecordFields {
  readonly seq: bigint;
  readonly ip: string;
  readonly tcp: number;
  readonly udp: number;
}

function portBytes(port: number): Uint8Array {
  return port < 256 ? Uint8Array.of(port) : Uint8Array.of(port >> 8, port & 0xff);
}

/** A signed "v4" node record for `privateKey` (the node's own record, or a test's). */
export function encodeNodeRecord(privateKey: Uint8Array, fields: NodeRecordFields): string {
  const ip = fields.ip.split('.').map(Number);
  if (ip.length !== 4 || ip.some((part) => !Number.isInteger(part) || part < 0 || part > 255)) throw new NodeRecordError(`${fields.ip} is not an IPv4 address`);
  const text = (value: string) => new TextEncoder().encode(value);
  const kvs = [text('id'), text('v4'), text('ip'), Uint8Array.from(ip), text('secp256k1'), secp256k1.getPublicKey(privateKey, true), text('tcp'), portBytes(fields.tcp), text('udp'), portBytes(fields.udp)];
  const signature = secp256k1.sign(keccak256(encodeRlp([fields.seq, ...kvs])), privateKey, { prehash: false, format: 'compact' });
  return `enr:${Buffer.from(encodeRlp([signature, fields.seq, ...kvs])).toString('base64url')}`;
}
