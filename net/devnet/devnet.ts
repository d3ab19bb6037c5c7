/**
 * `createDevnet`: the deterministic local chain. Each `next()` extends the head by one block, except every
 * `reorgEvery` heights, where it replaces the top `reorgDepth` blocks with a branch one block longer. Finality trails
 * the head by `finalityLag` (> reorgDepth), so a reorg never touches a finalized block. Same config, same chain.
 */
import type { ForkSchedule, Hash } from '../eth/index.js';
import { devnetAccounts, devnetAuthorities, devnetFeeRecipients } from './accounts.js';
import { buildBlock, type BuiltBlock, type ChainContext } from './block-builder.js';
import { BlockStore } from './block-store.js';
import { initialChainState } from './chain-state.js';
import { resolveDevnetConfig, type DevnetConfig, type DevnetConfigInput } from './config.js';
import { DEVNET_CONTRACTS } from './contracts.js';
import { devnetForkSchedule } from './fork-schedule.js';
import { devnetGenesis } from './genesis.js';
import type { DevnetBlock, DevnetReorg, DevnetStep } from './types.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface Devnet {
  readonly config: DevnetConfig;
  readonly schedule: ForkSchedule;
  readonly genesis: DevnetBlock;
  /** Produces the next step; calls are serialized, so overlapping calls get consecutive steps. */
  next(): Promise<DevnetStep>;
  /** Calls `next()` until the head reaches `number` (a restart replays to where it was). */
  advanceTo(number: number): Promise<void>;
  head(): BlockRef;
  /** The block `finalityLag` below the head (genesis while the chain is shorter); never moves backwards. */
  finalized(): BlockRef;
  /** Canonical block at `number`, if retained. */
  blockByNumber(number: number): DevnetBlock | undefined;
  /** Any retained block by hash, abandoned ones included (an undo reads them). */
  blockByHash(hash: Hash): DevnetBlock | undefined;
  /** What a restart needs to continue from canonical block `number` (see `DevnetResume`); undefined if not retained. */
  resumeRecord(number: number): DevnetResumeBlock | undefined;
}

/** One canonical block with the generator's state after it, and the reorg branch counter at that point. */
export interface DevnetResumeBlock {
  readonly built: BuiltBlock;
  readonly branch: number;
}

/**
 * The newest canonical blocks of an earlier run (contiguous, oldest first, ending at its head, at
 * least `finalityLag + 1` of them): the devnet continues from them exactly as the earlier run would
 * have, without regenerating the chain from genesis.
 */
export type DevnetResume = readonly DevnetResumeBlock[];

/** How many of the newest canonical blocks a resume needs: down to the finalized block (a reorg never goes deeper). */
export function resumeDepth(config: DevnetConfig): number {
  return config.finalityLag + 1;
}

function chainContext(config: DevnetConfig): ChainContext {
  return {
    config,
    schedule: devnetForkSchedule(config),
    accounts: devnetAccounts(config.seed, config.accounts),
    authorities: devnetAuthorities(config.seed),
    feeRecipients: devnetFeeRecipients(config.seed),
  };
}

function genesisBlock(chain: ChainContext): BuiltBlock {
  const { header, hash } = devnetGenesis(chain.config);
  const state = initialChainState({
    accounts: chain.accounts.length,
    authorities: chain.authorities.length,
    tokens: DEVNET_CONTRACTS.tokens.length,
    pools: DEVNET_CONTRACTS.pools.length,
  });
  return { devnetBlock: { block: { header, transactions: [], uncles: [], withdrawals: [] }, receipts: [], hash }, state };
}

/** Accepts overrides of the defaults (or a full config); throws `DevnetConfigError` for a bad key. */
export function createDevnet(input: DevnetConfigInput = {}, resume: DevnetResume = []): Devnet {
  const config = resolveDevnetConfig(input);
  const chain = chainContext(config);
  const genesis = genesisBlock(chain);
  const store = new BlockStore(genesis, config.retainBlocks);
  let branch = 0;
  for (const record of resume) {
    store.setCanonical(record.built);
    branch = record.branch;
  }
  let queue: Promise<unknown> = Promise.resolve();

  const reorgDue = (head: number) =>
    config.reorgEvery > 0 && head > config.reorgDepth && head % config.reorgEvery === 0;

  async function extend(): Promise<DevnetStep> {
    const built = await buildBlock(chain, store.canonicalAt(store.head.number)!, branch);
    store.setCanonical(built);
    return { kind: 'block', ...built.devnetBlock };
  }

  async function reorg(): Promise<DevnetReorg> {
    const head = store.head.number;
    const depth = config.reorgDepth;
    branch += 1;
    let parent = store.canonicalAt(head - depth)!;
    const forkPoint = { number: head - depth, hash: parent.devnetBlock.hash };
    const abandoned = Array.from({ length: depth }, (_, i) => ({ number: forkPoint.number + 1 + i, hash: store.canonicalAt(forkPoint.number + 1 + i)!.devnetBlock.hash }));
    const replacement: BuiltBlock[] = [];
    for (let i = 0; i <= depth; i++) {
      parent = await buildBlock(chain, parent, branch);
      replacement.push(parent);
    }
    for (const built of replacement) store.setCanonical(built);
    return { kind: 'reorg', depth, forkPoint, abandoned, blocks: replacement.map((built) => built.devnetBlock) };
  }

  function next(): Promise<DevnetStep> {
    const step = queue.then(() => (reorgDue(store.head.number) ? reorg() : extend()));
    queue = step.catch(() => undefined);
    return step;
  }

  return {
    config,
    schedule: chain.schedule,
    genesis: genesis.devnetBlock,
    next,
    async advanceTo(number: number) {
      while (store.head.number < number) await next();
    },
    head: () => store.head,
    finalized() {
      const number = Math.max(0, store.head.number - config.finalityLag);
      return { number, hash: store.canonicalAt(number)!.devnetBlock.hash };
    },
    blockByNumber: (number) => store.canonicalAt(number)?.devnetBlock,
    blockByHash: (hash) => store.byBlockHash(hash)?.devnetBlock,
    resumeRecord(number) {
      const built = store.canonicalAt(number);
      return built === undefined ? undefined : { built, branch };
    },
  };
}
