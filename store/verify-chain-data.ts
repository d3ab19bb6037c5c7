/**
 * `db verify` checks of the chain data lanes: the journal replays to exactly the canonical table
 * without undoing anything finalized, and every processor's change log and coverage are whole.
 */
import { checkStoredEntry } from './change-log.js';
import { decodeJournalMove } from './journal.js';
import { decodeU64Key, decodeU64KeyAsNumber } from './keys.js';
import { instanceLogs } from './stream-tables.js';
import { registerVerifyCheck, type VerifyCheckResult, type VerifyContext } from './verify.js';
import { decode } from '../runtime/codec.js';
import type { Database } from 'lmdb';

function journalReplay(context: VerifyContext): VerifyCheckResult {
  const journal = context.table<Buffer, Buffer>('chain.journal');
  const canonical = context.table<Buffer, Buffer>('chain.canonical');
  if (!journal || !canonical) return { name: 'chain.journal replay', ok: true, detail: 'no chain data yet' };
  const replayed = new Map<number, string>();
  let finalized = -1;
  for (const { key, value } of journal.getRange({})) {
    const sequence = decodeU64Key(key);
    const move = decodeJournalMove(value);
    const hash = Buffer.from(move.hash).toString('hex');
    if (move.op === 'apply') replayed.set(move.number, hash);
    else if (move.op === 'undo') {
      if (move.number <= finalized) return { name: 'chain.journal replay', ok: false, detail: `move ${sequence} undoes block ${move.number}, at or below the finalized block ${finalized}` };
      if (replayed.get(move.number) !== hash) return { name: 'chain.journal replay', ok: false, detail: `move ${sequence} undoes block ${move.number} ${hash}, which is not canonical there` };
      replayed.delete(move.number);
    } else {
      if (move.number < finalized) return { name: 'chain.journal replay', ok: false, detail: `move ${sequence} finalizes block ${move.number} below the finalized ${finalized}` };
      if (replayed.get(move.number) !== hash) return { name: 'chain.journal replay', ok: false, detail: `move ${sequence} finalizes block ${move.number} ${hash}, which is not canonical there` };
      finalized = move.number;
    }
  }
  let entries = 0;
  for (const { key, value } of canonical.getRange({})) {
    entries += 1;
    const number = decodeU64KeyAsNumber(key);
    if (replayed.get(number) !== value.toString('hex')) return { name: 'chain.journal replay', ok: false, detail: `chain.canonical at ${number} differs from the journal's replay` };
  }
  if (entries !== replayed.size) return { name: 'chain.journal replay', ok: false, detail: `the journal replays to ${replayed.size} canonical blocks, the table has ${entries}` };
  return { name: 'chain.journal replay', ok: true, detail: `${entries} canonical blocks, finalized through ${finalized}` };
}

function processorLogs(context: VerifyContext): VerifyCheckResult[] {
  return instanceLogs(context.tableNames, (name) => context.table(name)).map((log) => {
    const name = `processor ${log.instance} change log and coverage`;
    const { changes, state } = log;
    const coverage = log.coverage as Database<{ to: number }, Buffer> | undefined;
    if (!changes || !state || !coverage) return { name, ok: false, detail: 'a table of the instance is missing' };
    let expected: bigint | null = null;
    let count = 0;
    for (const { key, value } of changes.getRange({})) {
      const first = decodeU64Key(key);
      if (expected !== null && first !== expected) return { name, ok: false, detail: `change sequence ${expected} is missing (next is ${first})` };
      const held = checkStoredEntry(first, value);
      expected = first + BigInt(held);
      count += held;
    }
    const progressBytes = state.getBinary(Buffer.from('progress'));
    const recorded = progressBytes ? decode<{ changeSequence: bigint }>(progressBytes).changeSequence : 0n;
    const head = expected === null ? null : expected - 1n;
    if (head !== null && BigInt(recorded) !== head) return { name, ok: false, detail: `the progress record says change ${recorded}, the log ends at ${head}` };
    let previousEnd = -1;
    for (const { key, value } of coverage.getRange({})) {
      const from = decodeU64KeyAsNumber(key);
      if (from <= previousEnd + 1 && previousEnd >= 0) return { name, ok: false, detail: `coverage ranges overlap or touch at block ${from}` };
      if (value.to < from) return { name, ok: false, detail: `coverage range ${from}..${value.to} is empty` };
      previousEnd = value.to;
    }
    return { name, ok: true, detail: `${count} changes` };
  });
}

registerVerifyCheck({ name: 'chain.journal replay', run: journalReplay });
registerVerifyCheck({ name: 'processor change logs', run: processorLogs });
