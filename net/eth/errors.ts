/**
 * Typed errors of `net/eth`. Each class has a stable `name`; each message says what was expected and what was found,
 * so a caller can log it as is and a peer-scoring lane can branch on the class.
 */

/** Base class: every error thrown on purpose by `net/eth` is one of these. */
export class EthFormatError extends Error {
  override name = 'EthFormatError';
}

export class InvalidHexError extends EthFormatError {
  override name = 'InvalidHexError';
  constructor(readonly value: string, expected: string) {
    super(`Invalid hex ${value.length > 80 ? `${value.slice(0, 80)}…` : value}: expected ${expected}.`);
  }
}

/** Bytes that are not RLP, or RLP whose shape is not the Ethereum object it should be. */
export class RlpDecodeError extends EthFormatError {
  override name = 'RlpDecodeError';
  constructor(readonly subject: string, readonly detail: string) {
    super(`Cannot decode ${subject}: ${detail}.`);
  }
}

export class UnsupportedTransactionTypeError extends EthFormatError {
  override name = 'UnsupportedTransactionTypeError';
  constructor(readonly typeByte: number) {
    super(`Unsupported transaction type 0x${typeByte.toString(16).padStart(2, '0')}: expected legacy (RLP list) or 0x01, 0x02, 0x03, 0x04.`);
  }
}

/** A signature that cannot yield a public key (r or s out of range, bad recovery bit, bad legacy v). */
export class InvalidSignatureError extends EthFormatError {
  override name = 'InvalidSignatureError';
  constructor(readonly detail: string) {
    super(`Invalid signature: ${detail}.`);
  }
}

/** A value that cannot be encoded: a missing field for its fork shape, an integer out of range, a wrong-length hash. */
export class InvalidFieldError extends EthFormatError {
  override name = 'InvalidFieldError';
  constructor(readonly subject: string, readonly field: string, readonly detail: string) {
    super(`Invalid ${subject} field ${field}: ${detail}.`);
  }
}

/** A geth `genesis.json` (or fork schedule) that does not describe a usable chain. */
export class GenesisFormatError extends EthFormatError {
  override name = 'GenesisFormatError';
  constructor(readonly key: string, readonly detail: string) {
    super(`Invalid genesis ${key}: ${detail}.`);
  }
}

/** Which part of a block failed verification against its header (or its parent). */
export type BlockVerificationField =
  | 'hash'
  | 'parentHash'
  | 'number'
  | 'transactionsRoot'
  | 'withdrawalsRoot'
  | 'receiptsRoot'
  | 'logsBloom'
  | 'gasUsed'
  | 'blobGasUsed'
  | 'sha3Uncles'
  | 'receiptCount';

/** Block material that does not match its header: names the field, both values and the block. */
export class BlockVerificationError extends EthFormatError {
  override name = 'BlockVerificationError';
  constructor(
    readonly field: BlockVerificationField,
    readonly expected: string,
    readonly actual: string,
    readonly blockNumber: number,
    readonly blockHash: string,
  ) {
    super(`Block ${blockNumber} (${blockHash}) failed verification: ${field} expected ${expected}, got ${actual}.`);
  }
}
