/**
 * A chain longer than generating allows, from a generated one: signing and building run at a few blocks a second,
 * so 100,000 mainnet-shaped blocks would take ~10 hours. The generated chain's `base` blocks come first, unchanged;
 * past them its blocks' bodies and receipts repeat in order under new headers — number, parent hash and timestamp
 * moved on, the base fee and the excess blob gas recomputed from the new parent (EIP-1559, EIP-4844/7918), so the
 * header chain keeps its rules — and every root a header commits to (transactions, receipts, withdrawals, uncles,
 * bloom) still holds for the body and receipts under it. Only the state root is the source block's: nothing
 * replays state from a chain file.
 *
 * The first cycle doubles as a check: recomputed, its headers must equal the generated ones byte for byte, or the
 * generator and these rules disagree and the file is not written.
 */
import { blobParamsAt, calcExcessBlobGas, encodeHeader, decodeHeader, keccak256Hex, type BlockHeader, type Hash } from '../../net/eth/index.js';
import { joinBlockRlp, splitBlockRlp } from '../../net/eth/block-parts.js';
import { devnetForkSchedule, devnetGenesis, nextBaseFee } from '../../net/devnet/index.js';
import type { CachedChain } from './chain-cache.js';
import { createChainFileWriter, readChainFile } from './chain-file.js';

/** `header` as the child of `parent`, `interval` seconds after it, with the fee fields the parent implies. */
function rechained(header: BlockHeader, parent: BlockHeader, parentHash: Hash, interval: number, blobParams: ReturnType<typeof blobParamsAt>): BlockHeader {
  return {
    ...header,
    number: parent.number + 1,
    parentHash,
    timestamp: parent.timestamp + interval,
    ...(header.baseFeePerGas === undefined ? {} : { baseFeePerGas: nextBaseFee(parent) }),
    ...(header.excessBlobGas === undefined || blobParams === undefined ? {} : { excessBlobGas: calcExcessBlobGas(parent, blobParams) }),
  };
}

/** Writes `blocks` blocks cycling `base`'s to `path` (through a temporary file); `progress` after each block. */
export async function writeCycledChain(base: CachedChain, blocks: number, path: string, progress: (done: number) => void = () => undefined): Promise<void> {
  const genesis = devnetGenesis(base.config);
  const schedule = devnetForkSchedule(base.config);
  const writer = createChainFileWriter(path, `${path}.${process.pid}.tmp`);
  try {
    let parent = genesis.header;
    let parentHash = genesis.hash;
    let done = 0;
    for (let cycle = 0; done < blocks; cycle += 1) {
      let sourceParentTimestamp = genesis.header.timestamp;
      let read = 0;
      for await (const record of readChainFile(base.path)) {
        if (done >= blocks) break;
        const parts = splitBlockRlp(record.block);
        const source = decodeHeader(parts.header);
        const interval = source.timestamp - sourceParentTimestamp;
        sourceParentTimestamp = source.timestamp;
        const number = parent.number + 1;
        const header = rechained(source, parent, parentHash, interval, blobParamsAt(schedule, { number, timestamp: parent.timestamp + interval }));
        const encoded = encodeHeader(header);
        if (cycle === 0) {
          if (Buffer.compare(Buffer.from(encoded), Buffer.from(parts.header)) !== 0) throw new Error(`${base.path}: block ${number}'s header differs when recomputed from its parent (the generator's header rules and chain-cycle.ts disagree); not cycling it`);
        }
        writer.append({ block: cycle === 0 ? record.block : joinBlockRlp(encoded, parts.body), receipts: record.receipts });
        parent = header;
        parentHash = keccak256Hex(encoded);
        done += 1;
        read += 1;
        progress(done);
      }
      if (read === 0) throw new Error(`${base.path} holds no block to cycle`);
    }
    writer.finish();
  } catch (error) {
    writer.abandon();
    throw error;
  }
}
