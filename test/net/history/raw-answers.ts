/**
 * What an execution client answers to the raw getters for a block given as stored header, body and eth/69 receipts,
 * built with the generic RLP encoder and the consensus receipt encoder (not with the code the tests check).
 */
import { bytesToHex } from '../../../net/eth/hex.js';
import { decodeEth69Receipts, encodeReceipt } from '../../../net/eth/receipt.js';
import { decodeRlp, encodeRlp, type RlpInput } from '../../../net/eth/rlp.js';

/** `debug_getRawBlock`: the block's RLP `[header, transactions, uncles, withdrawals?]`, as hex. */
export function rawBlockHex(header: Uint8Array, body: Uint8Array): string {
  return bytesToHex(encodeRlp([decodeRlp(header, 'header') as RlpInput, ...(decodeRlp(body, 'body') as RlpInput[])]));
}

/** `debug_getRawReceipts`: each receipt's consensus encoding, as hex. */
export function rawReceiptsHex(eth69: Uint8Array): string[] {
  return decodeEth69Receipts(eth69).map((receipt) => bytesToHex(encodeReceipt(receipt)));
}
