/**
 * The chain's formats a kind reads and computes with (`net/eth`, re-exported): hex and addresses, headers,
 * transactions and their senders, receipts and logs, the fork schedule and blob fees. A kind imports them from
 * here, never from `net/` itself.
 */
export { bytesToHex, hexToBytes, isAddressHex, isHashHex, type Address, type Hash, type Hex } from '../../../net/eth/hex.js';
export { hashHeader, type BlockHeader } from '../../../net/eth/header.js';
export type { Eip4844Transaction, Transaction, TransactionType } from '../../../net/eth/transaction-types.js';
export { decodeTransaction } from '../../../net/eth/transaction-decode.js';
export { hashTransaction } from '../../../net/eth/transaction-encode.js';
export { hashTransactionEncoding, typedSigningHash } from '../../../net/eth/transaction-raw.js';
export { recoverTransactionSender } from '../../../net/eth/transaction-sender.js';
export { recoverAddress } from '../../../net/eth/signature.js';
export type { Receipt } from '../../../net/eth/receipt.js';
export type { Log } from '../../../net/eth/log.js';
export { blobParamsAt, type BlockPosition, type ForkSchedule } from '../../../net/eth/fork-schedule.js';
export type { ForkIdGenesis } from '../../../net/eth/fork-id.js';
export { listBlobSchedule, type BlobScheduleInfo } from '../../../net/eth/blob-schedule.js';
export { blobBaseFee, blobReservePrice, GAS_PER_BLOB, type BlobParams } from '../../../net/eth/blob-fee.js';
