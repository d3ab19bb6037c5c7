/**
 * Builds one devnet block on a parent: plans and signs its transactions, synthesizes receipts, draws withdrawals,
 * computes the roots and fills every header field by its fork's rules (EIP-1559 base fee, EIP-4844/7691/7918 blob
 * gas, EIP-4788 beacon root, EIP-7685 requests hash).
 */
import {
  blobBaseFee,
  blobGasUsedBy,
  blobParamsAt,
  bytesToHex,
  calcExcessBlobGas,
  combineBlooms,
  EMPTY_REQUESTS_HASH,
  EMPTY_UNCLES_HASH,
  hashHeader,
  isForkActive,
  logsBloom,
  receiptsRoot,
  signTransaction,
  transactionsRoot,
  withdrawalsRoot,
  type Address,
  type BlockHeader,
  type ForkSchedule,
  type Receipt,
} from '../eth/index.js';
import type { DevnetAccount } from './accounts.js';
import { nextBaseFee } from './base-fee.js';
import type { BlockContext, TransactionDraft } from './block-context.js';
import { planBlockTransactions } from './block-plan.js';
import { cloneChainState, type ChainState } from './chain-state.js';
import { blockTimestamp, type DevnetConfig } from './config.js';
import { nextStateRoot } from './genesis.js';
import { DEVNET_EXTRA_DATA, ZERO_NONCE } from './header-fields.js';
import { deriveBytes, randomStream } from './prng.js';
import type { DevnetBlock } from './types.js';
import { drawWithdrawals } from './withdrawals.js';

/** What stays the same for every block of one devnet. */
export interface ChainContext {
  config: DevnetConfig;
  schedule: ForkSchedule;
  accounts: readonly DevnetAccount[];
  authorities: readonly DevnetAccount[];
  feeRecipients: readonly Address[];
}

/** A block together with the chain state after it (the parent state of its children). */
export interface BuiltBlock {
  devnetBlock: DevnetBlock;
  state: ChainState;
}

function receiptsOf(drafts: readonly TransactionDraft[]): Receipt[] {
  let cumulativeGasUsed = 0n;
  return drafts.map((draft) => {
    cumulativeGasUsed += draft.gasUsed;
    return { type: draft.unsigned.type, status: draft.status, cumulativeGasUsed, logsBloom: logsBloom(draft.logs), logs: draft.logs };
  });
}

/**
 * The child of `parent` on branch `branch` (the number of reorgs so far): the same parent, number and branch always
 * give the same block, and a new branch gives different transactions at the same height.
 */
export async function buildBlock(chain: ChainContext, parent: BuiltBlock, branch: number): Promise<BuiltBlock> {
  const { config, schedule } = chain;
  const parentHeader = parent.devnetBlock.block.header;
  const number = parentHeader.number + 1;
  const at = { number, timestamp: blockTimestamp(config, number) };
  const blobParams = blobParamsAt(schedule, at);
  const excessBlobGas = blobParams === undefined ? undefined : calcExcessBlobGas(parentHeader, blobParams);
  const rng = randomStream(config.seed, 'block', number, branch);
  const state = cloneChainState(parent.state);
  const ctx: BlockContext = {
    chainId: BigInt(config.chainId),
    number,
    timestamp: at.timestamp,
    baseFee: nextBaseFee(parentHeader),
    blobBaseFee: blobParams === undefined ? undefined : blobBaseFee(excessBlobGas!, blobParams.baseFeeUpdateFraction),
    setCodeActive: isForkActive(schedule, 'prague', at),
    accounts: chain.accounts,
    authorities: chain.authorities,
    rng,
    state,
  };
  const drafts = planBlockTransactions(ctx, {
    gasLimit: config.gasLimit,
    transactionsPerBlock: config.transactionsPerBlock,
    blobTransactionsPerBlock: config.blobTransactionsPerBlock,
    maxBlobsPerTransaction: config.maxBlobsPerTransaction,
    maxBlobsPerBlock: blobParams?.max ?? 0,
  });
  const transactions = drafts.map((draft) => signTransaction(draft.unsigned, chain.accounts[draft.senderIndex]!.privateKey));
  const receipts = receiptsOf(drafts);
  const withdrawals = drawWithdrawals(rng, state, chain.accounts.map((account) => account.address));
  const [txRoot, rcRoot, wdRoot] = await Promise.all([transactionsRoot(transactions), receiptsRoot(receipts), withdrawalsRoot(withdrawals)]);

  const header: BlockHeader = {
    parentHash: parent.devnetBlock.hash,
    sha3Uncles: EMPTY_UNCLES_HASH,
    miner: rng.pick(chain.feeRecipients),
    stateRoot: nextStateRoot(parentHeader.stateRoot, txRoot, rcRoot, wdRoot),
    transactionsRoot: txRoot,
    receiptsRoot: rcRoot,
    logsBloom: combineBlooms(receipts.map((receipt) => receipt.logsBloom)),
    difficulty: 0n,
    number,
    gasLimit: config.gasLimit,
    gasUsed: receipts.at(-1)?.cumulativeGasUsed ?? 0n,
    timestamp: at.timestamp,
    extraData: DEVNET_EXTRA_DATA,
    mixHash: bytesToHex(deriveBytes(config.seed, 'prev-randao', number, branch)),
    nonce: ZERO_NONCE,
    baseFeePerGas: ctx.baseFee,
    withdrawalsRoot: wdRoot,
  };
  if (excessBlobGas !== undefined) {
    header.blobGasUsed = blobGasUsedBy(transactions);
    header.excessBlobGas = excessBlobGas;
    header.parentBeaconBlockRoot = bytesToHex(deriveBytes(config.seed, 'beacon-root', number, branch));
  }
  if (isForkActive(schedule, 'prague', at)) header.requestsHash = EMPTY_REQUESTS_HASH;
  const block = { header, transactions, uncles: [], withdrawals };
  return { devnetBlock: { block, receipts, hash: hashHeader(header) }, state };
}
