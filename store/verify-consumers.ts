/**
 * `db verify` check of the durable consumers: every record decodes, is keyed by its own instance
 * and id, has acknowledged ≤ delivered, and names no change beyond its instance's change log.
 */
import { decode } from '../runtime/codec.js';
import { CONSUMER_ROLES, consumerKey, type ConsumerRecord } from './consumers.js';
import { changeHead } from './change-log.js';
import { registerVerifyCheck, type VerifyCheckResult, type VerifyContext } from './verify.js';

const NAME = 'consumers';

function logHead(context: VerifyContext, instance: string): bigint | null {
  if (!context.tableNames.includes(`p.${instance}.changes`)) return null;
  const changes = context.table<Buffer, Buffer>(`p.${instance}.changes`);
  const head = changes ? changeHead(changes) : 0n;
  const state = context.table<Buffer, Buffer>(`p.${instance}.state`);
  const progress = state?.getBinary(Buffer.from('progress'));
  const recorded = progress ? BigInt(decode<{ changeSequence: bigint }>(progress).changeSequence) : 0n;
  return recorded > head ? recorded : head;
}

function consumers(context: VerifyContext): VerifyCheckResult {
  const table = context.table<unknown, string>(NAME);
  if (!table) return { name: NAME, ok: true, detail: 'no consumers table' };
  let count = 0;
  for (const { key, value } of table.getRange({})) {
    const record = value as Partial<ConsumerRecord>;
    const problem = (detail: string): VerifyCheckResult => ({ name: NAME, ok: false, detail: `consumer ${JSON.stringify(key)}: ${detail}` });
    if (typeof record.instance !== 'string' || typeof record.id !== 'string' || consumerKey(record.instance, record.id) !== key) return problem('the record does not match its key');
    if (!CONSUMER_ROLES.includes(record.role as ConsumerRecord['role'])) return problem(`unknown role ${JSON.stringify(record.role)}`);
    if (typeof record.delivered !== 'bigint' || typeof record.acknowledged !== 'bigint') return problem('watermarks are not sequences');
    if (record.acknowledged > record.delivered) return problem(`acknowledged ${record.acknowledged} is beyond delivered ${record.delivered}`);
    if (record.credential?.algorithm !== 'scrypt' || !(record.credential.hash instanceof Uint8Array)) return problem('no salted credential hash');
    const head = logHead(context, record.instance);
    if (head !== null && record.delivered > head) return problem(`delivered ${record.delivered} is beyond the change log head ${head}`);
    count += 1;
  }
  return { name: NAME, ok: true, detail: `${count} consumers` };
}

registerVerifyCheck({ name: NAME, run: consumers });
