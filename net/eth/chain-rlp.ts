/** Chain files (`chain.rlp`, geth `export`/`import`): concatenated RLP blocks `[header, transactions, uncles, withdrawals?]`. */
import { blockFromRlp, type Block } from './block.js';
import { RlpDecodeError } from './errors.js';
import { decodeRlp, rlpItemLength } from './rlp.js';

/** Yields each block in file order; a truncated or malformed block throws `RlpDecodeError` naming its offset. */
export function* decodeChainRlp(bytes: Uint8Array): Generator<Block, void, undefined> {
  let offset = 0;
  let index = 0;
  while (offset < bytes.length) {
    const subject = `chain file block #${index} at byte ${offset}`;
    const length = rlpItemLength(bytes, offset, subject);
    if (offset + length > bytes.length) throw new RlpDecodeError(subject, `needs ${length} bytes, ${bytes.length - offset} remain`);
    yield blockFromRlp(decodeRlp(bytes.subarray(offset, offset + length), subject));
    offset += length;
    index += 1;
  }
}
