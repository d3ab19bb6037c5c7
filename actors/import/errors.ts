/**
 * Errors of `chain-node import`. Each message names the block (number, hash, or position in the file) and what
 * failed, so an operator can tell a corrupt file from a file of another chain from a conflicting store.
 */

/** Base class: the import refused its input; nothing past the last committed batch was written. */
export class ImportError extends Error {
  override name = 'ImportError';
}

/** A block in the chain file that cannot be read as a block. */
export class ChainFileError extends ImportError {
  override name = 'ChainFileError';
  constructor(readonly index: number, readonly offset: number, detail: string) {
    super(`chain file block #${index} (at byte ${offset}): ${detail}`);
  }
}

/** A block that reads fine but is not valid where it stands: bad roots, broken parent link, wrong fork fields. */
export class ImportBlockError extends ImportError {
  override name = 'ImportBlockError';
  constructor(readonly blockNumber: number, readonly blockHash: string, detail: string) {
    super(`block ${blockNumber} (${blockHash}): ${detail}`);
  }
}

/** The receipts file (`--receipts`) is malformed or does not match the chain. */
export class ReceiptsFileError extends ImportError {
  override name = 'ReceiptsFileError';
}
