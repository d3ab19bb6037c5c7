/** Event logs as receipts carry them: `[address, [topics...], data]`. */
import { RlpDecodeError } from './errors.js';
import { dataBytes, fixedBytes } from './field-bytes.js';
import type { Address, Hash, Hex } from './hex.js';
import { RlpFields, type RlpInput, type RlpItem } from './rlp.js';

export interface Log {
  address: Address;
  topics: readonly Hash[];
  data: Hex;
}

export function logToRlp(log: Log): RlpInput {
  return [
    fixedBytes(log.address, 20, 'log', 'address'),
    log.topics.map((topic, i) => fixedBytes(topic, 32, 'log', `topics[${i}]`)),
    dataBytes(log.data, 'log', 'data'),
  ];
}

export function logFromRlp(item: RlpItem, subject = 'log'): Log {
  if (!Array.isArray(item) || item.length !== 3) throw new RlpDecodeError(subject, 'expected [address, topics, data]');
  const f = new RlpFields(item, subject, ['address', 'topics', 'data']);
  const topics = f.list(1);
  const topicFields = new RlpFields(topics, subject, topics.map((_, i) => `topics[${i}]`));
  return { address: f.address(0), topics: topics.map((_, i) => topicFields.fixed(i, 32)), data: f.hex(2) };
}
