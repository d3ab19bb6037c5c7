/**
 * Errors of `net/era`. `Era1FormatError`: bytes that are not the e2store/Era1 structure they should be (thrown by
 * the readers, which know no block; the history reader re-throws it with the file and block). `Era1BlockError`: a
 * file refused for a block — it names the file, the block and the check (`mainnet-00000-5ec1ffb8.era1: block 17:
 * transactions root mismatch …`); it is a `HistoryBlockError`, so the history lane fails a chunk with it exactly as
 * with any other source's bad block. `Era1ArchiveError`: the archive itself (a directory or an HTTP base URL) cannot
 * be listed or a file cannot be had.
 */
import { HistoryBlockError } from '../history/history-block.js';

export class Era1FormatError extends Error {
  override name = 'Era1FormatError';
}

export class Era1BlockError extends HistoryBlockError {
  override readonly name: string = 'Era1BlockError';
  constructor(readonly file: string, blockNumber: number, readonly check: string) {
    super(blockNumber, `${file}: ${check}`);
    this.message = `${file}: block ${blockNumber}: ${check}`;
  }
}

export class Era1ArchiveError extends Error {
  override name = 'Era1ArchiveError';
  /** `retryable`: a transient failure (asked again); `checksumMismatch`: a download that is not the listed file. */
  constructor(message: string, readonly retryable = true, readonly checksumMismatch = false) {
    super(message);
  }
}
