/**
 * `GET /v1/processors/{p}/stream` (spec §4.8), registered on the uWS app directly because a stream
 * outlives the request/reply cycle of api/http.ts (and must not hold up a graceful drain).
 *
 * Accept, all in the request's own turn: unknown processor 404, delivery disabled 409, damaged
 * cursor 400 — as JSON errors before any stream byte. Otherwise 200 `text/event-stream`, the
 * `hello` frame, then either the changes after the resume position (the `Last-Event-ID` header wins
 * over `after`, as an EventSource reconnect sends both) or, for a cursor that cannot resume here,
 * one terminal `reset_required` event and the end of the stream.
 *
 * Content coding (sse-encoding.ts): a request whose `Accept-Encoding` accepts gzip gets
 * `Content-Encoding: gzip` (one gzip member, each chunk of frames a sync-flushed deflate segment that
 * decodes on arrival); any other gets the plain frames, with exactly the headers and bytes it always had.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from 'uWebSockets.js';
import { errorBody } from '../errors.js';
import { newRequestId, statusLine } from '../http.js';
import { CodedError } from '../../runtime/errors.js';
import type { RequestFaults } from '../request-faults.js';
import type { BearerCheck } from '../auth/bearer.js';
import type { ChangeFeed } from '../aggregate/change-feed.js';
import { resumePosition } from '../aggregate/change-position.js';
import { processorDescriptor, requireDelivery, type ConfiguredProcessor, type ProcessorRegistry } from '../aggregate/configured-processors.js';
import { negotiateEncoding, SseChunk, streamEncoder } from './sse-encoding.js';
import { helloFrame } from './sse-frames.js';
import type { SseHub } from './sse-hub.js';

export const STREAM_PATTERN = '/v1/processors/:processor/stream';

/**
 * The last hello sent: streams opened together (a reconnect wave) get the same bytes, so a gzip
 * stream reuses its deflated segment instead of deflating its own.
 */
let lastHello: SseChunk | null = null;

function helloChunk(frame: Buffer): SseChunk {
  if (!lastHello || !lastHello.plain.equals(frame)) lastHello = new SseChunk(frame);
  return lastHello;
}

type Accepted = ({ processor: ConfiguredProcessor; position: bigint } | { processor: ConfiguredProcessor; reset: CodedError }) & {
  acceptEncoding: string;
};

/** The methods the stream route answers, for the listener's 405 `Allow` on any other. */
export const STREAM_ROUTE = { method: 'get', pattern: STREAM_PATTERN } as const;

/** What the stream route needs: the node's aggregate context, or a relay's. */
export interface StreamContext {
  readonly processors: Pick<ProcessorRegistry, 'byId'>;
  /** The API bearer check, or null when no token is configured. */
  readonly bearer?: BearerCheck | null;
  readonly feed: ChangeFeed;
}

export function registerStreamRoute(app: TemplatedApp, context: StreamContext, hub: SseHub, faults: RequestFaults): void {
  app.get(STREAM_PATTERN, (res, req) => {
    const requestId = newRequestId();
    let accepted: Accepted;
    try {
      accepted = accept(context, req);
    } catch (error) {
      answerError(res, requestId, error, faults);
      return;
    }
    try {
      open(res, requestId, context, hub, accepted);
    } catch (error) {
      // The request boundary: the status line may be out already, so this stream ends here.
      faults.record('api', requestId, error, { route: STREAM_PATTERN });
      res.close();
    }
  });
}

function open(res: HttpResponse, requestId: string, context: StreamContext, hub: SseHub, accepted: Accepted): void {
  res.writeStatus(statusLine(200));
  res.writeHeader('content-type', 'text/event-stream');
  res.writeHeader('cache-control', 'no-cache');
  // nginx (and other proxies honouring it) pass each frame on at once instead of buffering the stream.
  res.writeHeader('x-accel-buffering', 'no');
  res.writeHeader('x-request-id', requestId);
  const encoder = streamEncoder(negotiateEncoding(accepted.acceptEncoding));
  if (encoder.encoding === 'gzip') {
    res.writeHeader('content-encoding', 'gzip');
    res.writeHeader('vary', 'accept-encoding');
  }
  const hello = helloChunk(helloFrame(context.feed.chainId, processorDescriptor(accepted.processor), context.feed.coverage(accepted.processor)));
  const opening = encoder.start();
  res.write(opening.length > 0 ? Buffer.concat([opening, encoder.encode(hello)]) : encoder.encode(hello));
  if ('reset' in accepted) {
    const { code, message, details } = accepted.reset;
    const reset = encoder.encode(hub.resetFrame(accepted.processor, { code, message, details }));
    const finish = encoder.finish();
    res.end(finish.length > 0 ? Buffer.concat([reset, finish]) : reset);
    return;
  }
  hub.attach(accepted.processor, res, accepted.position, encoder);
}

function accept(context: StreamContext, req: HttpRequest): Accepted {
  context.bearer?.(req.getHeader('authorization'));
  const processor = context.processors.byId(decodeURIComponent(req.getParameter(0) ?? ''));
  requireDelivery(processor);
  const lastEventId = req.getHeader('last-event-id');
  // uWS request headers are readable only in this turn.
  const acceptEncoding = req.getHeader('accept-encoding');
  const token = lastEventId !== '' ? lastEventId : new URLSearchParams(req.getQuery() ?? '').get('after') ?? undefined;
  try {
    return { processor, acceptEncoding, position: resumePosition(token, context.feed.owner(processor), context.feed.bounds(processor)) };
  } catch (error) {
    if (error instanceof CodedError && (error.code === 'reset_required' || error.code === 'cursor_expired')) return { processor, acceptEncoding, reset: error };
    throw error;
  }
}

function answerError(res: HttpResponse, requestId: string, error: unknown, faults: RequestFaults): void {
  const coded = error instanceof URIError ? new CodedError('invalid_request', 'the processor name is not valid percent-encoding') : error;
  const { status, body, headers } = errorBody(coded, requestId);
  if (!(coded instanceof CodedError)) faults.record('api', requestId, error, { route: STREAM_PATTERN });
  res.writeStatus(statusLine(status));
  res.writeHeader('x-request-id', requestId);
  for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value);
  res.writeHeader('content-type', 'application/json');
  res.end(JSON.stringify(body));
}
