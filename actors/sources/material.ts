import { encodeBlockBody } from '../../net/eth/block.js';
import { encodeHeader } from '../../net/eth/header.js';
import { hexToBytes } from '../../net/eth/hex.js';
import { encodeEth69Receipts } from '../../net/eth/receipt.js';
import type { BlockHeader } from '../../net/eth/header.js';
import type { BlockBody } from '../../net/eth/block.js';
import type { Receipt } from '../../net/eth/receipt.js';
import type { Hash } from '../../net/eth/hex.js';
import type { BlockMaterial } from '../../store/chain-material.js';

/** The stored form of a decoded block: RLP header, RLP body, eth/69 receipts. */
export function toMaterial(block: { header: BlockHeader; hash: Hash; body: BlockBody; receipts: readonly Receipt[] | null }): BlockMaterial {
  return {
    number: block.header.number,
    hash: hexToBytes(block.hash),
    header: encodeHeader(block.header),
    body: encodeBlockBody(block.body),
    receipts: block.receipts ? encodeEth69Receipts(block.receipts) : null,
  };
}
