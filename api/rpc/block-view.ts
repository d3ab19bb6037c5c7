/**
 * One recorded block as the JSON-RPC layer reads it: header, body, transaction hashes, senders and
 * receipts decoded on first use from the store's bytes, and its JSON renderings kept once made.
 * A block is content-addressed by its hash, so a view never goes stale; only which hash is
 * canonical at a height changes, and that is resolved per request (rpc/chain-reader.ts).
 */
import { decodeBlockBody, type BlockBody } from '../../net/eth/block.js';
import { joinBlockRlp } from '../../net/eth/block-parts.js';
import { listPrefixLength } from '../../net/eth/rlp-walk.js';
import { transactionHashesOfBody } from '../../net/eth/body-transaction-hashes.js';
import { decodeHeader, type BlockHeader } from '../../net/eth/header.js';
import { bytesToHex, type Address, type Hex } from '../../net/eth/hex.js';
import { decodeEth69Receipts, type Receipt } from '../../net/eth/receipt.js';
import { recoverTransactionSender } from '../../net/eth/transaction-sender.js';

export interface BlockBytes {
  readonly hash: Uint8Array;
  readonly number: number;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array | undefined;
  /** Senders already recovered elsewhere (they are a pure function of the body). */
  readonly senders?: Address[];
}

export class BlockView {
  readonly hash: Hex;
  readonly number: number;
  readonly header: BlockHeader;
  /** The RLP size of the whole block `[header, transactions, uncles, withdrawals?]`, as `size` reports it. */
  readonly size: number;
  /** Header, body and receipts bytes as stored (the block cache weighs views by it). */
  get storedBytes(): number {
    return this.headerBytes + this.bodyBytes.length + (this.receiptBytes?.length ?? 0);
  }
  /** Rendered JSON, filled by the renderers on first use. */
  readonly rendered: { header?: string; block?: Buffer; fullBlock?: Buffer; receipts?: string[]; receiptsArray?: Buffer; logs?: readonly string[][] } = {};
  private readonly headerBytes: number;
  private readonly headerData: Uint8Array;
  private readonly bodyBytes: Uint8Array;
  private receiptBytes: Uint8Array | undefined;
  private decodedBody: BlockBody | undefined;
  private hashes: Hex[] | undefined;
  private senderList: Address[] | undefined;
  private receiptList: Receipt[] | undefined;

  constructor(bytes: BlockBytes) {
    this.hash = bytesToHex(bytes.hash);
    this.number = bytes.number;
    this.header = decodeHeader(bytes.header);
    this.headerBytes = bytes.header.length;
    this.headerData = bytes.header;
    this.bodyBytes = bytes.body;
    this.receiptBytes = bytes.receipts;
    this.senderList = bytes.senders;
    const bodyPrefix = bytes.body[0]! < 0xf8 ? 1 : 1 + (bytes.body[0]! - 0xf7);
    const payload = bytes.header.length + bytes.body.length - bodyPrefix;
    this.size = listPrefixLength(payload) + payload;
  }

  get body(): BlockBody {
    this.decodedBody ??= decodeBlockBody(this.bodyBytes);
    return this.decodedBody;
  }

  get transactionHashes(): Hex[] {
    this.hashes ??= transactionHashesOfBody(this.bodyBytes).map(bytesToHex);
    return this.hashes;
  }

  /** Senders recovered from the signatures (the costly part of a full block; done once per view). */
  get senders(): Address[] {
    this.senderList ??= this.body.transactions.map(recoverTransactionSender);
    return this.senderList;
  }

  /** The header's RLP, as recorded (`debug_getRawHeader`). */
  get rawHeader(): Uint8Array {
    return this.headerData;
  }

  /** The block's RLP `[header, transactions, uncles, withdrawals?]` (`debug_getRawBlock`). */
  rawBlock(): Uint8Array {
    return joinBlockRlp(this.headerData, this.bodyBytes);
  }

  get hasReceipts(): boolean {
    return this.receiptBytes !== undefined;
  }

  /** Receipts were recorded after this view was made (a source that fetched them later). */
  attachReceipts(bytes: Uint8Array): void {
    if (this.receiptBytes === undefined) this.receiptBytes = bytes;
  }

  /** The block's receipts, or undefined when its source had none. */
  get receipts(): Receipt[] | undefined {
    if (this.receiptBytes === undefined) return undefined;
    this.receiptList ??= decodeEth69Receipts(this.receiptBytes);
    return this.receiptList;
  }
}
