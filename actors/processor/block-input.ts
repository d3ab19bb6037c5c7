/** Reads one block's recorded material and decodes it for a processor kind. */
import { decodeBlockBody } from '../../net/eth/block.js';
import { decodeHeader } from '../../net/eth/header.js';
import { hexToBytes, type Hex } from '../../net/eth/hex.js';
import { decodeEth69Receipts } from '../../net/eth/receipt.js';
import { getBodyBytes, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/env.js';
import type { BlockInput, KindNeeds } from './kind.js';
import { bloomMatches, type LogInterest } from '../../net/p2p/log-interest.js';
import { blockRlpSize } from './block-rlp-size.js';

/**
 * The block's material as the kind needs it: body and receipts are decoded only when it reads them. A kind that
 * reads receipts gets a block recorded without them only when its header bloom proves it holds none of the logs
 * the kind reads (`interest`; a source skipped them, e.g. the p2p lane's bloom check) — then with no receipts.
 * Otherwise missing receipts (never fetched, or pruned) fail the block: a kind never runs over material it lacks.
 */
export function readBlockInput(store: Store, number: number, hash: Hex, needs: KindNeeds = { bodies: true, receipts: true }, interest: LogInterest | null = null): BlockInput {
  const key = hexToBytes(hash);
  const headerBytes = getHeaderBytes(store, key);
  const bodyBytes = getBodyBytes(store, key);
  if (!headerBytes || !bodyBytes) throw new Error(`block ${number} (${hash}) is in the journal but its material is not recorded`);
  const receiptsBytes = getReceiptsBytes(store, key);
  const body = needs.bodies ? decodeBlockBody(bodyBytes) : null;
  const header = decodeHeader(headerBytes);
  if (needs.receipts && !receiptsBytes && (interest === null || bloomMatches(header, interest))) {
    throw new Error(`block ${number} (${hash}): its receipts are not recorded (not fetched, or pruned), and this kind reads them${interest === null ? '' : ' (its header bloom may hold logs the kind reads)'}`);
  }
  const parentBytes = getHeaderBytes(store, hexToBytes(header.parentHash));
  return {
    number,
    hash,
    header,
    transactions: body?.transactions ?? [],
    receipts: needs.receipts ? (receiptsBytes ? decodeEth69Receipts(receiptsBytes) : []) : null,
    sizeBytes: blockRlpSize(headerBytes, bodyBytes),
    parentTimestamp: parentBytes ? decodeHeader(parentBytes).timestamp : null,
  };
}
