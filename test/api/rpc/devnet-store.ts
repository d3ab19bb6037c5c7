/**
 * A temporary store filled from a devnet run the way the node fills it: the source records every
 * produced block's material, the chain lane's own fork choice and journal writer (`planHead`,
 * `commitHead`, `commitFinalized`) make each new head canonical — reorgs included — and write the
 * transaction index. Then a JSON-RPC context reads it, as the rpc lane does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planHead } from '../../../actors/chain/fork-choice.js';
import { chainView, commitFinalized, commitHead, loadChainState, type ChainState } from '../../../actors/chain/journal-writer.js';
import { toMaterial } from '../../../actors/sources/material.js';
import { devnetForkSchedule, devnetGenesis, resolveDevnetConfig, type DevnetBlock, type DevnetConfigInput } from '../../../net/devnet/index.js';
import { recordBlocks } from '../../../store/chain-material.js';
import { openStore, type Store } from '../../../store/store.js';
import { createRpcContext, type RpcContext, type RpcLimits } from '../../../api/rpc/rpc-context.js';
import { answerBody } from '../../../api/rpc/dispatch.js';
import { runDevnet, type DevnetRun } from '../../net/devnet/run-devnet.js';

export interface DevnetStore {
  readonly dataDir: string;
  readonly store: Store;
  readonly run: DevnetRun;
  readonly chain: ChainState;
  readonly context: RpcContext;
  /** Sends one JSON-RPC body through the dispatcher and parses the answer. */
  call<T = unknown>(body: unknown): T;
  close(): Promise<void>;
}

export const LIMITS: RpcLimits = { maxBatchRequests: 20, maxLogsBlockRange: 50, maxLogsResults: 5000 };

function material(block: DevnetBlock) {
  return toMaterial({ header: block.block.header, hash: block.hash, body: block.block, receipts: block.receipts });
}

/** Runs the devnet to `head` and commits it step by step; finalizes the devnet's finalized block at the end when `finalize`. */
export async function devnetStore(input: DevnetConfigInput, head: number, options: { finalize?: boolean } = {}): Promise<DevnetStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-rpc-'));
  const config = resolveDevnetConfig(input);
  const store = openStore({ dataDir, chainId: config.chainId });
  const run = await runDevnet(input, head);
  const chain = loadChainState(store);
  const commit = async (blocks: readonly DevnetBlock[]) => {
    await recordBlocks(store, blocks.map(material));
    const top = blocks[blocks.length - 1]!;
    await commitHead(store, chain, planHead(chainView(store, chain), { number: top.block.header.number, hash: top.hash }, 64));
  };
  await commit([run.canonical[0]!]);
  for (const step of run.steps) await commit(step.kind === 'block' ? [step] : step.blocks);
  if (options.finalize !== false) {
    const finalized = run.finalizedTrail.at(-1)!;
    await commitFinalized(store, chain, finalized);
  }
  const genesis = devnetGenesis(config);
  const context = createRpcContext({
    store, limits: LIMITS, capabilities: { probe: 'capabilities' },
    chain: { chainId: config.chainId, schedule: devnetForkSchedule(config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } },
  });
  return {
    dataDir, store, run, chain, context,
    call: <T>(body: unknown) => {
      const answer = answerBody(context, typeof body === 'string' ? body : JSON.stringify(body));
      return (answer === undefined ? undefined : JSON.parse(answer.toString('utf8'))) as T;
    },
    async close() {
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
