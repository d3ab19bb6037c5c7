/**
 * What a kind's functions are given beside the block (processor SDK): the chain the instance follows and
 * its own tables. The lane builds it once per instance (`kindContext`).
 */
import type { ForkSchedule } from '../../../net/eth/fork-schedule.js';
import type { Hex } from '../../../net/eth/hex.js';
import type { ProcessorTables } from '../../../store/store.js';
import type { StateBatch } from './state.js';

/** The chain facts every kind's context carries. */
export interface ChainContextArgs {
  readonly network: string;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hex; readonly timestamp: number };
  /** Where the schedule came from (BlobSchedule.source). */
  readonly scheduleSource?: 'chain_spec' | 'eth_config';
}

export interface KindContext extends ChainContextArgs {
  readonly tables: ProcessorTables;
  /**
   * Ordered-state kinds: the lane's commit batch (its writes held in memory and flushed once before the
   * transaction commits). Absent, the state API writes through to the tables (a caller outside the
   * lane's commit, such as a test, needs nothing more).
   */
  readonly stateBatch?: StateBatch;
}

export function kindContext(tables: ProcessorTables, chain: ChainContextArgs): KindContext {
  return { tables, network: chain.network, schedule: chain.schedule, genesis: chain.genesis, scheduleSource: chain.scheduleSource ?? 'chain_spec' };
}
