/** Test helper: drives a devnet to a head and records every step, the final canonical chain and the finality trail. */
import { createDevnet, type Devnet, type DevnetBlock, type DevnetConfigInput, type DevnetStep } from '../../../net/devnet/index.js';
import type { BlockRef } from '../../../store/chain-types.js';

export interface DevnetRun {
  devnet: Devnet;
  steps: DevnetStep[];
  /** The head number before each step. */
  headsBefore: number[];
  /** The finalized block after each step. */
  finalizedTrail: BlockRef[];
  /** The canonical chain at the end, indexed by block number (genesis at 0). */
  canonical: DevnetBlock[];
  /** Every block ever produced (abandoned ones too), by hash. */
  produced: Map<string, DevnetBlock>;
}

export async function runDevnet(input: DevnetConfigInput, headNumber: number): Promise<DevnetRun> {
  const devnet = createDevnet(input);
  const run: DevnetRun = { devnet, steps: [], headsBefore: [], finalizedTrail: [], canonical: [devnet.genesis], produced: new Map([[devnet.genesis.hash, devnet.genesis]]) };
  while (devnet.head().number < headNumber) {
    run.headsBefore.push(devnet.head().number);
    const step = await devnet.next();
    run.steps.push(step);
    const blocks = step.kind === 'block' ? [step] : step.blocks;
    if (step.kind === 'reorg') run.canonical.length = step.forkPoint.number + 1;
    for (const block of blocks) {
      run.canonical.push(block);
      run.produced.set(block.hash, block);
    }
    run.finalizedTrail.push(devnet.finalized());
  }
  return run;
}

/** Canonical blocks without genesis. */
export function blocksOf(run: DevnetRun): DevnetBlock[] {
  return run.canonical.slice(1);
}
