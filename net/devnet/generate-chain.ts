/** Bulk generation for benchmarks and tests: the steps up to a head, or the final canonical chain. */
import { createDevnet } from './devnet.js';
import type { DevnetConfigInput } from './config.js';
import type { DevnetBlock, DevnetStep } from './types.js';

/** Every step until the head reaches `headNumber`, as they happen (reorgs included). */
export async function* devnetSteps(config: DevnetConfigInput, headNumber: number): AsyncGenerator<DevnetStep> {
  const devnet = createDevnet(config);
  while (devnet.head().number < headNumber) yield await devnet.next();
}

/** The canonical blocks 1..`count` after all reorgs (reorgs still shape the chain unless `reorgEvery` is 0). */
export async function generateChain(config: DevnetConfigInput, count: number): Promise<DevnetBlock[]> {
  const chain: DevnetBlock[] = [];
  for await (const step of devnetSteps(config, count)) {
    if (step.kind === 'block') chain.push(step);
    else {
      chain.length = step.forkPoint.number;
      chain.push(...step.blocks);
    }
  }
  return chain.slice(0, count);
}
