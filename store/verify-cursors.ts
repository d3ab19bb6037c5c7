/**
 * `db verify` check `cursors`: every cursor the store keeps names this store — each retained
 * change's cursor (and the same token in its envelope) and each consumer's delivered and
 * acknowledged cursor decode under the store's epoch, chain and instance with the sequence they
 * sit at. A copy whose epoch was changed without re-minting them (see store/epoch-rotation.ts)
 * would hand out cursors it then refuses.
 */
import { changeEntries } from './change-log.js';
import type { ConsumerRecord } from './consumers.js';
import { decodeCursor } from './cursor.js';
import { epochFromBytes, isChainId } from './meta.js';
import { instanceLogs } from './stream-tables.js';
import { registerVerifyCheck, type VerifyCheckResult, type VerifyContext } from './verify.js';

const NAME = 'cursors';

function cursors(context: VerifyContext): VerifyCheckResult {
  const epoch = epochFromBytes(context.meta.storeEpoch);
  if (epoch === undefined) return { name: NAME, ok: false, detail: 'no store epoch to check cursors against' };
  const chainId = isChainId(context.meta.chainId) ? context.meta.chainId : 0;
  const problem = (detail: string): VerifyCheckResult => ({ name: NAME, ok: false, detail });
  let changes = 0;
  for (const log of instanceLogs(context.tableNames, (name) => context.table(name))) {
    const name = `${log.instance} change log`;
    const expect = { epoch, chainId, instance: log.instance };
    const table = log.changes;
    if (!table) continue;
    for (const stored of changeEntries({ changes: table, ...expect })) {
      try {
        const decoded = decodeCursor(stored.cursor, expect);
        if (decoded.sequence !== stored.sequence) return problem(`${name} change ${stored.sequence}: its cursor names sequence ${decoded.sequence}`);
      } catch (error) {
        return problem(`${name} change ${stored.sequence}: ${(error as Error).message}`);
      }
      if (!stored.json.includes(`"${stored.cursor}"`, 0, 'latin1')) return problem(`${name} change ${stored.sequence}: the envelope does not carry the change's cursor`);
      changes += 1;
    }
  }
  let consumers = 0;
  for (const { key, value } of context.table<unknown, string>('consumers')?.getRange({}) ?? []) {
    const record = value as ConsumerRecord;
    for (const [field, cursor, sequence] of [['delivered', record.deliveredCursor, record.delivered], ['acknowledged', record.acknowledgedCursor, record.acknowledged]] as const) {
      try {
        const decoded = decodeCursor(cursor, { epoch, chainId, instance: record.instance });
        if (decoded.sequence !== sequence) return problem(`consumer ${JSON.stringify(key)}: its ${field} cursor names sequence ${decoded.sequence}, not ${sequence}`);
      } catch (error) {
        return problem(`consumer ${JSON.stringify(key)}: ${field} cursor: ${(error as Error).message}`);
      }
    }
    consumers += 1;
  }
  return { name: NAME, ok: true, detail: `${changes} change cursors, ${consumers} consumers` };
}

registerVerifyCheck({ name: NAME, run: cursors });
