/** The processor kinds this node runs, by their `[[processors]] kind`. */
import type { ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { Hex } from '../../net/eth/hex.js';
import type { ProcessorTables } from '../../store/env.js';
import { blobsKind } from '../processors/blobs/kind.js';
import type { KindContext, ProcessorKind } from './kind.js';

const KINDS: Readonly<Record<string, ProcessorKind>> = { blobs: blobsKind };

export function processorKind(kind: string): ProcessorKind {
  const found = KINDS[kind];
  if (!found) throw new Error(`unknown processor kind '${kind}'`);
  return found;
}

export interface ChainContextArgs {
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
  /** Where the schedule came from (BlobSchedule.source). */
  readonly scheduleSource?: 'chain_spec' | 'eth_config';
}

export function kindContext(tables: ProcessorTables, chain: ChainContextArgs): KindContext {
  return { tables, network: chain.network, schedule: chain.schedule, genesis: chain.genesis, scheduleSource: chain.scheduleSource ?? 'chain_spec' };
}
