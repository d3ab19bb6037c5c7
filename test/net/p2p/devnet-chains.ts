/**
 * Generated devnet chains for loopback peers: one chain with receipts, and two that share their genesis and part at
 * block 1 (a self-consistent fork: the same accounts, fewer transactions a block on the fork).
 */
import { encodeEth69Receipts } from '../../../net/eth/receipt.js';
import { encodeBlockBody } from '../../../net/eth/block.js';
import { encodeHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { generateChain } from '../../../net/devnet/generate-chain.js';
import { resolveDevnetConfig, type DevnetConfigInput } from '../../../net/devnet/config.js';
import { devnetForkSchedule } from '../../../net/devnet/fork-schedule.js';
import { devnetGenesis } from '../../../net/devnet/genesis.js';
import type { ChainReader } from '../../../net/p2p/serve.js';
import type { ChainIdentity } from '../../../net/p2p/status.js';
import { readerOf, type RawBlock } from './hive-chain.js';

/** A chain as loopback peers serve it: identity, raw blocks, a reader with receipts. */
export interface PeerChain {
  readonly identity: ChainIdentity;
  readonly blocks: RawBlock[];
  readonly reader: ChainReader;
  readonly receipts: Map<Hash, Uint8Array>;
}

/** A generated devnet chain of `count` blocks (receipts included). */
export async function devnetPeerChain(input: DevnetConfigInput, count: number): Promise<PeerChain> {
  const config = resolveDevnetConfig(input);
  const genesis = devnetGenesis(config);
  const identity: ChainIdentity = { chainId: config.chainId, schedule: devnetForkSchedule(config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  const generated = await generateChain(input, count);
  const blocks: RawBlock[] = [
    { number: 0, hash: genesis.hash, header: encodeHeader(genesis.header), body: encodeBlockBody({ transactions: [], uncles: [], withdrawals: [] }) },
    ...generated.map((b) => ({ number: b.block.header.number, hash: b.hash, header: encodeHeader(b.block.header), body: encodeBlockBody(b.block) })),
  ];
  const receipts = new Map<Hash, Uint8Array>(generated.map((b) => [b.hash, encodeEth69Receipts(b.receipts)]));
  return { identity, blocks, receipts, reader: { ...readerOf(blocks), receiptsByHash: (hash) => receipts.get(hash) } };
}

/** The canonical chain and a fork of it from block 1, `count` blocks each. */
export async function forkedDevnetChains(count: number): Promise<{ canonical: PeerChain; fork: PeerChain }> {
  const common = { blobTransactionsPerBlock: 0, accounts: 16, reorgEvery: 0 };
  return { canonical: await devnetPeerChain({ ...common, transactionsPerBlock: 6 }, count), fork: await devnetPeerChain({ ...common, transactionsPerBlock: 4 }, count) };
}
