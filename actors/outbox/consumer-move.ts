/**
 * A rebuild's promote or rollback (spec §9.5, actors/history/rebuilds.ts): the processor's durable consumers move
 * from the instance that served them to the one selected, and the processor's serving instance changes, in one
 * write transaction — a reader never sees consumers of one instance while another serves.
 *
 * A consumer's cursors name its instance (spec §2.4), so a moved consumer gets positions in the other instance's
 * log: it resumes right before the first change of that log whose block lies above the block of its acknowledged
 * change. Everything it acknowledged is a block whose outputs the two instances share (the rebuild compared them);
 * what follows may repeat blocks it already has (at-least-once; destination writes are idempotent, spec §6). Cursors
 * the client still holds from the old instance are refused with `reset_required` (wrong instance, spec §7.2 rule 4).
 */
import { changeFacts, holdsChange } from '../../store/change-log.js';
import { consumerKey, listConsumers, type ConsumerRecord } from '../../store/consumers.js';
import { cursorBlockNumber } from '../../store/cursor.js';
import type { ProcessorTables } from '../../store/store.js';
import { servingKey } from '../../store/rebuilds.js';
import { cursorAt, type OutboxStore } from './consumer-writes.js';
import type { MoveConsumers } from './messages.js';

export interface MovedConsumer {
  readonly id: string;
  readonly to: string;
  /** The sequence of `to`'s log the consumer resumes after. */
  readonly resumeAfter: string;
}

/** The sequence before the first change of `tables`' log whose block is above `block` (null: before its first change). */
function resumePoint(tables: ProcessorTables, block: number | null): bigint {
  let before = 0n;
  for (const change of changeFacts(tables.changes)) {
    const sequence = change.sequence;
    const changeBlock = block === null ? null : change.block?.number ?? null;
    if (changeBlock === null || block === null || changeBlock > block) return sequence - 1n;
    before = sequence;
  }
  return before;
}

/** The block the consumer has acknowledged through: its acknowledged change's, or, when it acknowledged nothing since a move, the one it had before. */
function acknowledgedBlock(record: ConsumerRecord): number | null {
  if (record.moved && record.acknowledged <= record.moved.resumeAfter) return record.moved.throughBlock;
  return record.acknowledged > 0n ? cursorBlockNumber(record.acknowledgedCursor) : null;
}

function moved(out: OutboxStore, record: ConsumerRecord, to: string, tables: ProcessorTables): ConsumerRecord {
  const throughBlock = acknowledgedBlock(record);
  const resumeAfter = resumePoint(tables, throughBlock);
  const cursor = cursorAt(out, tables, to, resumeAfter);
  return { ...record, instance: to, delivered: resumeAfter, deliveredCursor: cursor, acknowledged: resumeAfter, acknowledgedCursor: cursor, moved: { resumeAfter, throughBlock } };
}

export function moveConsumers(out: OutboxStore, message: MoveConsumers): { moved: MovedConsumer[] } {
  const { store } = out;
  return store.env.transactionSync(() => {
    const tables = store.processor(message.to);
    const result: MovedConsumer[] = [];
    for (const record of listConsumers(store.consumers, message.from)) {
      if (record.processor !== message.processor) continue;
      const next = moved(out, record, message.to, tables);
      store.consumers.put(consumerKey(message.to, record.id), next);
      store.consumers.remove(consumerKey(message.from, record.id));
      result.push({ id: record.id, to: message.to, resumeAfter: next.acknowledged.toString() });
    }
    store.jobs.put(servingKey(message.processor), message.to);
    // A change exactly at the resume point must exist when the point is not 0 (the log is dense from its tail).
    for (const entry of result) {
      const after = BigInt(entry.resumeAfter);
      if (after > 0n && !holdsChange(tables.changes, after)) throw new Error(`consumer '${entry.id}' would resume after change ${after}, which ${message.to}'s log does not hold`);
    }
    return { moved: result };
  });
}
