/**
 * Block headers: every shape from Frontier to Osaka, decided by field count (15 pre-London, 16 London/Paris,
 * 17 Shanghai, 20 Cancun, 21 Prague/Osaka). `number` and `timestamp` are JavaScript numbers (decode rejects values
 * above 2^53-1, far beyond any real chain); gas, fees and difficulty are bigints.
 */
import { InvalidFieldError, RlpDecodeError } from './errors.js';
import { dataBytes, fixedBytes, uintField } from './field-bytes.js';
import type { Address, Hash, Hex } from './hex.js';
import { keccak256Hex } from './keccak.js';
import { decodeRlpList, encodeRlp, RlpFields, type RlpInput, type RlpItem } from './rlp.js';

export interface BlockHeader {
  parentHash: Hash;
  sha3Uncles: Hash;
  miner: Address;
  stateRoot: Hash;
  transactionsRoot: Hash;
  receiptsRoot: Hash;
  logsBloom: Hex;
  difficulty: bigint;
  number: number;
  gasLimit: bigint;
  gasUsed: bigint;
  timestamp: number;
  extraData: Hex;
  mixHash: Hash;
  /** 8 bytes; zero after the merge. */
  nonce: Hex;
  /** London (EIP-1559). */
  baseFeePerGas?: bigint;
  /** Shanghai (EIP-4895). */
  withdrawalsRoot?: Hash;
  /** Cancun (EIP-4844). */
  blobGasUsed?: bigint;
  /** Cancun (EIP-4844). */
  excessBlobGas?: bigint;
  /** Cancun (EIP-4788). */
  parentBeaconBlockRoot?: Hash;
  /** Prague (EIP-7685). */
  requestsHash?: Hash;
}

const SUBJECT = 'block header';
const FIELD_NAMES = [
  'parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom', 'difficulty',
  'number', 'gasLimit', 'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'baseFeePerGas', 'withdrawalsRoot',
  'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash',
] as const;
/** Field counts of the header shapes that exist on Ethereum. */
const HEADER_LENGTHS = [15, 16, 17, 20, 21] as const;
/** Optional fields in encoding order, each with the field count that includes it. */
const OPTIONAL_FIELDS = [
  ['baseFeePerGas', 16],
  ['withdrawalsRoot', 17],
  ['blobGasUsed', 18],
  ['excessBlobGas', 19],
  ['parentBeaconBlockRoot', 20],
  ['requestsHash', 21],
] as const;

export function decodeHeader(bytes: Uint8Array): BlockHeader {
  return headerFromRlp(decodeRlpList(bytes, SUBJECT));
}

/** Builds a header from an already decoded RLP list (block bodies and chain files decode headers inside lists). */
export function headerFromRlp(item: RlpItem): BlockHeader {
  if (!Array.isArray(item)) throw new RlpDecodeError(SUBJECT, 'expected an RLP list, got a byte string');
  if (!(HEADER_LENGTHS as readonly number[]).includes(item.length)) {
    throw new RlpDecodeError(SUBJECT, `expected ${HEADER_LENGTHS.join(', ')} fields, got ${item.length}`);
  }
  const f = new RlpFields(item, SUBJECT, FIELD_NAMES);
  const header: BlockHeader = {
    parentHash: f.fixed(0, 32),
    sha3Uncles: f.fixed(1, 32),
    miner: f.address(2),
    stateRoot: f.fixed(3, 32),
    transactionsRoot: f.fixed(4, 32),
    receiptsRoot: f.fixed(5, 32),
    logsBloom: f.fixed(6, 256),
    difficulty: f.quantity(7),
    number: f.number(8),
    gasLimit: f.quantity(9, 8),
    gasUsed: f.quantity(10, 8),
    timestamp: f.number(11),
    extraData: f.hex(12),
    mixHash: f.fixed(13, 32),
    nonce: f.fixed(14, 8),
  };
  if (item.length >= 16) header.baseFeePerGas = f.quantity(15);
  if (item.length >= 17) header.withdrawalsRoot = f.fixed(16, 32);
  if (item.length >= 20) {
    header.blobGasUsed = f.quantity(17, 8);
    header.excessBlobGas = f.quantity(18, 8);
    header.parentBeaconBlockRoot = f.fixed(19, 32);
  }
  if (item.length >= 21) header.requestsHash = f.fixed(20, 32);
  return header;
}

/** The header as the RLP list that is hashed and sent on the wire. */
export function headerToRlp(header: BlockHeader): RlpInput[] {
  const fields: RlpInput[] = [
    fixedBytes(header.parentHash, 32, SUBJECT, 'parentHash'),
    fixedBytes(header.sha3Uncles, 32, SUBJECT, 'sha3Uncles'),
    fixedBytes(header.miner, 20, SUBJECT, 'miner'),
    fixedBytes(header.stateRoot, 32, SUBJECT, 'stateRoot'),
    fixedBytes(header.transactionsRoot, 32, SUBJECT, 'transactionsRoot'),
    fixedBytes(header.receiptsRoot, 32, SUBJECT, 'receiptsRoot'),
    fixedBytes(header.logsBloom, 256, SUBJECT, 'logsBloom'),
    uintField(header.difficulty, SUBJECT, 'difficulty'),
    uintField(header.number, SUBJECT, 'number', 64),
    uintField(header.gasLimit, SUBJECT, 'gasLimit', 64),
    uintField(header.gasUsed, SUBJECT, 'gasUsed', 64),
    uintField(header.timestamp, SUBJECT, 'timestamp', 64),
    dataBytes(header.extraData, SUBJECT, 'extraData'),
    fixedBytes(header.mixHash, 32, SUBJECT, 'mixHash'),
    fixedBytes(header.nonce, 8, SUBJECT, 'nonce'),
  ];
  const length = encodedFieldCount(header);
  if (length >= 16) fields.push(uintField(header.baseFeePerGas!, SUBJECT, 'baseFeePerGas'));
  if (length >= 17) fields.push(fixedBytes(header.withdrawalsRoot!, 32, SUBJECT, 'withdrawalsRoot'));
  if (length >= 20) {
    fields.push(uintField(header.blobGasUsed!, SUBJECT, 'blobGasUsed', 64));
    fields.push(uintField(header.excessBlobGas!, SUBJECT, 'excessBlobGas', 64));
    fields.push(fixedBytes(header.parentBeaconBlockRoot!, 32, SUBJECT, 'parentBeaconBlockRoot'));
  }
  if (length >= 21) fields.push(fixedBytes(header.requestsHash!, 32, SUBJECT, 'requestsHash'));
  return fields;
}

/** Field count implied by the optional fields present; a later fork's field without an earlier one is an error. */
function encodedFieldCount(header: BlockHeader): number {
  let length = 15;
  for (const [name, count] of OPTIONAL_FIELDS) {
    if (header[name] === undefined) continue;
    if (length !== count - 1) {
      const missing = OPTIONAL_FIELDS.find(([, c]) => c === length + 1)![0];
      throw new InvalidFieldError(SUBJECT, missing, `missing while ${name} is present`);
    }
    length = count;
  }
  if (length === 18 || length === 19) {
    throw new InvalidFieldError(SUBJECT, length === 18 ? 'excessBlobGas' : 'parentBeaconBlockRoot', 'missing in a Cancun header');
  }
  return length;
}

export function encodeHeader(header: BlockHeader): Uint8Array {
  return encodeRlp(headerToRlp(header));
}

/** The block hash: keccak256 of the header's RLP. */
export function hashHeader(header: BlockHeader): Hash {
  return keccak256Hex(encodeHeader(header));
}
