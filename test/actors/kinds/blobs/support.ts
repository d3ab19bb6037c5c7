/** Inputs the blob processor tests share: decoded mainnet fixture blocks, the default devnet chain, reference math. */
import { generateChain, devnetForkSchedule, devnetGenesis, resolveDevnetConfig, type DevnetBlock } from '../../../../net/devnet/index.js';
import {
  decodeBlockBody,
  decodeEth69Receipts,
  decodeHeader,
  hashHeader,
  type BlockBody,
  type BlockHeader,
  type ForkSchedule,
  type Hash,
  type Receipt,
} from '../../../../net/eth/index.js';
import { encodeBlockBody, encodeEth69Receipts, encodeHeader } from '../../../../net/eth/index.js';
import { putBlockMaterial } from '../../../../store/chain-material.js';
import type { Store } from '../../../../store/store.js';
import { u64Key } from '../../../../store/keys.js';
import { blockRlpSize } from '../../../../net/eth/block-rlp-size.js';
import { mainnetBlocks } from '../../../net/eth/fixtures.js';

export interface FixtureBlock {
  number: number;
  header: BlockHeader;
  hash: Hash;
  body: BlockBody;
  receipts: Receipt[];
  /** From the fixture's header and body RLP. */
  sizeBytes: number;
}

/** Every block of `fixtures/mainnet-blocks/`, decoded, in block-number order. */
export function mainnetFixtureBlocks(): FixtureBlock[] {
  return mainnetBlocks().map((fixture) => {
    const header = decodeHeader(fixture.header);
    return {
      number: fixture.number,
      header,
      hash: hashHeader(header),
      body: decodeBlockBody(fixture.body),
      receipts: decodeEth69Receipts(fixture.receipts),
      sizeBytes: blockRlpSize(fixture.header, fixture.body),
    };
  });
}

export const DEVNET_BLOCK_COUNT = 70;

export interface DevnetChain {
  schedule: ForkSchedule;
  genesis: { hash: Hash; timestamp: number };
  secondsPerBlock: number;
  blocks: DevnetBlock[];
}

let devnetChain: Promise<DevnetChain> | undefined;

/** The default devnet's canonical blocks 1..70 (Cancun at genesis, Prague at 20, Osaka at 40, BPO1 at 60); built once. */
export function defaultDevnetChain(): Promise<DevnetChain> {
  devnetChain ??= (async () => {
    const config = resolveDevnetConfig();
    const genesis = devnetGenesis(config);
    return {
      schedule: devnetForkSchedule(config),
      genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp },
      secondsPerBlock: Math.ceil(config.blockTimeMs / 1000),
      blocks: await generateChain({}, DEVNET_BLOCK_COUNT),
    };
  })();
  return devnetChain;
}

/** Writes devnet blocks into a store as the chain lane records them: material, and each canonical at its height (inside a write). */
export function recordCanonical(store: Store, blocks: readonly DevnetBlock[]): void {
  for (const b of blocks) {
    const hash = Buffer.from(b.hash.slice(2), 'hex');
    putBlockMaterial(store, {
      number: b.block.header.number, hash, header: encodeHeader(b.block.header),
      body: encodeBlockBody({ transactions: b.block.transactions, uncles: [], ...(b.block.withdrawals ? { withdrawals: b.block.withdrawals } : {}) }),
      receipts: encodeEth69Receipts(b.receipts),
    });
    store.chain.canonical.put(u64Key(b.block.header.number), hash);
  }
}

/** EIP-4844's `fake_exponential`, written out from the EIP's pseudocode independently of `net/eth`. */
export function referenceFakeExponential(factor: bigint, numerator: bigint, denominator: bigint): bigint {
  let term = factor * denominator;
  let sum = 0n;
  for (let i = 1n; term > 0n; i++) {
    sum += term;
    term = (term * numerator) / (denominator * i);
  }
  return sum / denominator;
}

/** Gas used by each transaction, from consecutive receipts' cumulative totals. */
export function receiptGasUsed(receipts: readonly Receipt[]): bigint[] {
  return receipts.map((receipt, i) => receipt.cumulativeGasUsed - (i === 0 ? 0n : receipts[i - 1]!.cumulativeGasUsed));
}

/** Σ over every receipt of its gas used × the base fee: what a block's execution burn must equal. */
export function executionBurnFromReceipts(receipts: readonly Receipt[], baseFeePerGas: bigint): bigint {
  return receiptGasUsed(receipts).reduce((sum, used) => sum + used * baseFeePerGas, 0n);
}
