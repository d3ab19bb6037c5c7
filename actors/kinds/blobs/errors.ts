/**
 * Why a block cannot become a BlobsBlock. Each error names the block (number and hash) and says what to change;
 * the code is the spec error a lane reports when the failure surfaces through the API.
 */
import { CodedError, type ErrorCode } from '../sdk/errors.js';

export interface BlockIdentity {
  number: number;
  hash: string;
}

export class BlobsTransformError extends CodedError {
  readonly blockNumber: number;
  readonly blockHash: string;

  constructor(code: ErrorCode, block: BlockIdentity, message: string) {
    super(code, `blobs processor, block ${block.number} (${block.hash}): ${message}`, { blockNumber: block.number, blockHash: block.hash });
    this.name = 'BlobsTransformError';
    this.blockNumber = block.number;
    this.blockHash = block.hash;
  }
}

/** The block precedes the first blob fork (Cancun): it has no blob fields to report. */
export class BlobsBlockBeforeCancunError extends BlobsTransformError {
  constructor(block: BlockIdentity, firstBlobForkTimestamp: number | null) {
    const when = firstBlobForkTimestamp === null ? 'the fork schedule has no blob fork' : `the first blob fork activates at timestamp ${firstBlobForkTimestamp}`;
    super('invalid_request', block, `no blob parameters apply (${when}); configure the blobs processor's start block at or after the Cancun activation block`);
    this.name = 'BlobsBlockBeforeCancunError';
  }
}

/** Receipts are absent: per-transaction execution burn (receipt gas used × base fee) cannot be computed without them. */
export class BlobsReceiptsRequiredError extends BlobsTransformError {
  constructor(block: BlockIdentity) {
    super('unsupported_capability', block, 'receipts are required (executionBurnedWei = receipt gas used × base fee); use a source that serves receipts for this range');
    this.name = 'BlobsReceiptsRequiredError';
  }
}

/** Header, transactions, receipts and fork schedule disagree (wrong schedule for this chain, or unverified material). */
export class BlobsMaterialMismatchError extends BlobsTransformError {
  constructor(block: BlockIdentity, detail: string) {
    super('internal', block, `${detail}; check that the processor's fork schedule belongs to this chain and that the block material was verified`);
    this.name = 'BlobsMaterialMismatchError';
  }
}
