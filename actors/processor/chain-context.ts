/** The chain facts every kind's context carries. */
import type { ForkSchedule } from '../../net/eth/fork-schedule.js';
import type { Hex } from '../../net/eth/hex.js';
import type { ProcessorTables } from '../../store/store.js';
import type { KindContext } from './kind.js';

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
