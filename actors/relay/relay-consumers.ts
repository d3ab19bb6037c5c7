/**
 * The relay's consumer backend (api/aggregate/consumers/consumer-routes.ts ConsumerBackend): records in a JetStream
 * key-value bucket (net/jetstream/consumer-records.ts), changed with compare-and-set by the same transitions the
 * node's outbox applies (store/consumer-transitions.ts), against the bounds of the relay's copy of the stream; pages
 * from that copy (relay-feed.ts). A consumer created through one relay continues through any other.
 */
import { CodedError } from '../../runtime/errors.js';
import type { ConsumerBackend } from '../../api/aggregate/consumers/consumer-routes.js';
import type { ConsumerPage } from '../../api/aggregate/consumers/consumer-page.js';
import type { ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import { acknowledged, delivered, leased, newConsumerRecord, session, toSave, type CursorAt } from '../../store/consumer-transitions.js';
import type { ConsumerRecord, LogBounds } from '../../store/consumers.js';
import { encodeCursor } from '../../store/cursor.js';
import type { ConsumerRecords } from '../../net/jetstream/consumer-records.js';
import type { Logger } from '../../runtime/log.js';
import { errorFields } from '../../runtime/log.js';
import type { RelayFeed } from './relay-feed.js';

export function relayConsumers(feed: RelayFeed, records: () => ConsumerRecords, log: Logger): ConsumerBackend {
  /** The processor whose copy holds `instance` (a relay serves each processor from one instance). */
  const processorOf = (instance: string): ConfiguredProcessor => {
    const found = feed.state().find((p) => p.instance === instance);
    if (!found) throw new CodedError('not_found', `instance '${instance}' is not published to this relay's stream`);
    return feed.registry.byId(found.id);
  };
  const bounds = (processor: ConfiguredProcessor): LogBounds => {
    const { head, tail } = feed.bounds(processor);
    return { head, logged: tail === null ? 0n : head, tail };
  };
  const cursorAt = (processor: ConfiguredProcessor): CursorAt => (sequence) => {
    const change = sequence > 0n ? feed.read(processor, sequence - 1n, 1)[0] : undefined;
    return change?.sequence === sequence ? change.cursor : encodeCursor({ ...feed.owner(processor), sequence });
  };
  const notFound = (id: string) => new CodedError('not_found', `no consumer '${id}' on this processor`, { consumer: id });
  /** One compare-and-set call on the record; what `change` answers. */
  const update = async <T>(instance: string, id: string, change: (record: ConsumerRecord, now: number) => { write: ConsumerRecord | null; answer: T }): Promise<T> => {
    const answer = await records().update(instance, id, (record) => change(record, Date.now()));
    if (answer === undefined) throw notFound(id);
    return answer;
  };
  /** The record as the call leaves it: written with its lease extended unless nothing changed and the lease has time left. */
  const saved = (next: ConsumerRecord, now: number, changed: boolean) => {
    const write = toSave(next, now, changed);
    return { write, answer: write ?? next };
  };

  return {
    list: (processor) => records().list(processor.instance),
    find: async (processor, id) => (await records().get(processor.instance, id))?.record,
    subscriptionOf: () => undefined,
    owner: (processor, instance) => ({ ...feed.owner(processor), instance }),
    coverage: (processor) => feed.coverage(processor),

    async create(creation) {
      const processor = processorOf(creation.instance);
      const record = newConsumerRecord(creation, bounds(processor), cursorAt(processor), Date.now());
      const descriptor = feed.state().find((p) => p.instance === creation.instance)!;
      if (!(await records().create(record, descriptor.subject))) {
        throw new CodedError('conflict', `consumer '${creation.id}' already exists on this processor; delete it first to recreate it`, { consumer: creation.id });
      }
      return record;
    },
    remove: (ref) => records().remove(ref.instance, ref.id),
    lease: (ref, redeliver) => {
      const processor = processorOf(ref.instance);
      return update(ref.instance, ref.id, (found, now) => saved(leased(session(found, bounds(processor), now), redeliver, now), now, true));
    },
    deliver: (ref, limit) => {
      const processor = processorOf(ref.instance);
      return update(ref.instance, ref.id, (found, now) => {
        const current = bounds(processor);
        const record = session(found, current, now);
        const batch = delivered(record, current, limit, cursorAt(processor));
        const { write, answer } = saved(batch.record, now, batch.record !== found);
        return { write, answer: { record: answer, after: batch.after.toString(), through: batch.through.toString() } };
      });
    },
    async acknowledge(ref, sequence, cursor) {
      const processor = processorOf(ref.instance);
      const record = await update(ref.instance, ref.id, (found, now) => {
        const current = session(found, bounds(processor), now);
        const next = acknowledged(current, BigInt(sequence), cursor);
        return saved(next, now, next !== found);
      });
      // The durable consumer's floor follows, off the answer's path.
      records().follow(ref.instance, ref.id, record.acknowledged).catch((error: unknown) => log.warn('cannot move a relay consumer\'s JetStream floor', { consumer: ref.id, ...errorFields(error) }));
      return record;
    },

    async page(processor, record, after, through, closing): Promise<ConsumerPage> {
      const count = Number(through - after);
      if (count > 0) await feed.prepare(processor, after, count);
      const changes = count > 0 ? feed.read(processor, after, count) : [];
      if (changes.length !== count || (count > 0 && changes[0]!.sequence !== after + 1n)) {
        throw new CodedError('not_ready', `changes ${after + 1n}..${through} were delivered but this relay's copy does not hold them all yet; retry`, { consumer: record.id });
      }
      const lastCursor = count > 0 ? changes[count - 1]!.cursor : null;
      const COMMA = Buffer.from(',');
      const parts: Buffer[] = [Buffer.from('{"data":[')];
      changes.forEach((change, i) => {
        if (i > 0) parts.push(COMMA);
        parts.push(change.json);
      });
      parts.push(Buffer.from(closing(lastCursor)));
      return { body: Buffer.concat(parts), count, release: () => undefined };
    },
  };
}
