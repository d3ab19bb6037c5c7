/**
 * The polled change feed (spec §4.3): `/v1/processors/{p}/changes/head` and
 * `/v1/processors/{p}/changes?after&limit`, a Page of ChangeEnvelope built from the log's stored
 * JSON bytes. `nextCursor` is the last envelope's cursor when the page is full, else null.
 */
import type { Route } from '../routes.js';
import type { ChangeFeed } from './change-feed.js';
import { requireDelivery, type ConfiguredProcessor, type ProcessorRegistry } from './configured-processors.js';
import { resumePosition } from './change-position.js';
import { jsonBytesReply, pageBytes } from './json-body.js';
import { pageLimit, type PageLimits } from './query-params.js';

/** What the change routes need: the node's context (api/aggregate/aggregate-context.ts) or a relay's. */
export interface ChangesContext {
  readonly processors: Pick<ProcessorRegistry, 'byId'>;
  readonly limits: PageLimits;
}

export function changesRoutes(context: ChangesContext, feed: ChangeFeed): Route[] {
  /** The head's sequence, the cursor of the change at it (when retained) and the coverage. */
  const headReply = (processor: ConfiguredProcessor, head: bigint) => {
    const headChange = head > 0n ? feed.read(processor, head - 1n, 1)[0] : undefined;
    return {
      body: {
        sequence: head.toString(),
        cursor: headChange?.sequence === head ? headChange.cursor : null,
        coverage: feed.coverage(processor),
      },
    };
  };
  return [
    {
      method: 'get', pattern: '/v1/processors/:processor/changes/head', open: false,
      handler: (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        requireDelivery(processor);
        const { head } = feed.bounds(processor);
        const fetching = head > 0n ? feed.prepare?.(processor, head - 1n, 1) : undefined;
        return fetching ? fetching.then(() => headReply(processor, head)) : headReply(processor, head);
      },
    },
    {
      method: 'get', pattern: '/v1/processors/:processor/changes', open: false,
      handler: (request) => {
        const processor = context.processors.byId(request.params[0] ?? '');
        requireDelivery(processor);
        const limit = pageLimit(request.query, context.limits);
        const token = request.query.get('after') ?? undefined;
        const position = () => resumePosition(token, feed.owner(processor), feed.bounds(processor));
        const page = (after: bigint) => {
          const changes = feed.read(processor, after, limit);
          const nextCursor = changes.length === limit ? changes[changes.length - 1]!.cursor : null;
          return jsonBytesReply(pageBytes(changes.map((change) => change.json), nextCursor, feed.coverage(processor)));
        };
        const after = position();
        const fetching = feed.prepare?.(processor, after, limit);
        // What was fetched may have left the feed meanwhile (a relay trims what the stream removed): ask again.
        return fetching ? fetching.then(() => page(position())) : page(after);
      },
    },
  ];
}
