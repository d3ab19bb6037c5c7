/**
 * The JSON-RPC listeners on uWebSockets.js: HTTP (POST a request or a batch to any path) and
 * WebSocket (requests as text frames, plus `eth_subscribe` / `eth_unsubscribe`). No built-in
 * authentication (spec §5.5). Request bodies and frames are bounded by `[rpc] max_request_body_bytes`.
 */
import { isUtf8 } from 'node:buffer';
import uWS from 'uWebSockets.js';
import type { Counter, Gauge } from 'prom-client';
import type { Logger } from '../../runtime/log.js';
import { isJsonMediaType, newRequestId } from '../http.js';
import { requestFaults, type ListenerName, type RequestFaultsMetrics } from '../request-faults.js';
import { answerBody, answerBodyParts, joinParts, type AnswerParts, type DispatchOptions, type TransportMethods } from './dispatch.js';
import type { RpcContext } from './rpc-context.js';
import type { HistoryFiller, HoleRequest } from './history-hole.js';
import { internalError, limitExceeded, RpcError } from './rpc-errors.js';
import { SubscriptionHub, type Connection } from './subscriptions.js';

export interface RpcServerOptions {
  readonly context: RpcContext;
  readonly maxBodyBytes: number;
  /** Bytes queued for one WebSocket client before it is closed with 1013. */
  readonly wsMaxBufferedBytes: number;
  readonly maxSubscriptionsPerConnection: number;
  readonly log: Logger;
  readonly metrics: RpcServerMetrics;
  /** On-demand history: fills the holes a body found before it is answered again (api/rpc/history-hole.ts). */
  readonly fillHistory?: HistoryFiller;
}

/** What the JSON-RPC listeners update; the rpc lane declares it (actors/rpc/metrics.ts). */
export interface RpcServerMetrics extends RequestFaultsMetrics {
  /** Bodies answered, by transport (`http`, `ws`). */
  readonly requests: Counter<'transport'>;
  /** WebSocket clients closed with 1013 for falling behind. */
  readonly lagging: Counter;
  /** WebSocket frames refused by closing the connection, by close code. */
  readonly refusedFrames: Counter<'code'>;
  readonly notifications: Counter;
  /** Open WebSocket connections. */
  readonly connections: Gauge;
}

export interface RpcServers {
  readonly http: uWS.TemplatedApp;
  readonly ws: uWS.TemplatedApp;
  readonly hub: SubscriptionHub;
  /** HTTP requests being answered right now (graceful shutdown waits for zero). */
  readonly inFlight: { count: number };
}

interface SocketData {
  connection?: Connection;
}

const JSON_TYPE = 'application/json';

/**
 * The context, its store reads moved to the newest commit: the history lane (another worker) has just recorded
 * the blocks a body's first pass missed, and this thread's LMDB read transaction may still be the older snapshot.
 */
function readFresh(context: RpcContext): RpcContext {
  context.chain.store.env.resetReadTxn();
  return context;
}

/** What each JSON-RPC listener serves: requests are POSTed; the WebSocket listener takes upgrades (GET). */
export const RPC_HTTP_METHODS: readonly string[] = ['POST'];
export const RPC_WS_METHODS: readonly string[] = ['GET'];

function errorAnswer(error: RpcError): Buffer {
  return Buffer.from(`{"jsonrpc":"2.0","id":null,"error":${error.toJson()}}`);
}

function tooLargeBody(limit: number): Buffer {
  return errorAnswer(limitExceeded(`request body exceeds the limit of ${limit} bytes`, { limitBytes: limit }));
}

/** WebSocket close codes (RFC 6455 §7.4.1) the listener sends itself. */
const CLOSE_INVALID_PAYLOAD = 1007;
const CLOSE_MESSAGE_TOO_BIG = 1009;
const CLOSE_INTERNAL_ERROR = 1011;

/**
 * uWS buffers a frame up to `maxPayloadLength` and drops the TCP connection (no close frame) above
 * it, so the listener takes frames up to twice the limit and closes those over the limit with 1009
 * itself; only a frame over twice the limit meets uWS's abrupt close.
 */
function wsPayloadCeiling(limit: number): number {
  return Math.min(limit * 2, 0x7fff_ffff);
}

/**
 * One growing buffer per listener that a multi-part answer is joined into just before `end`: uWS
 * sends what the socket takes and copies any rest into its own buffer before `end` returns, so the
 * joined bytes are never needed again and the next answer can reuse the space (a block with full
 * transactions is hundreds of kilobytes: a fresh allocation per request is the costly part).
 *
 * (Streaming the cached parts with tryEnd/onWritable instead would skip even this copy, but uWS
 * closes the connection when a pipelined request arrives while a response is still streaming.)
 */
const SCRATCH_LIMIT_BYTES = 8 * 1024 * 1024;
let scratch = Buffer.allocUnsafe(0);

function joinedForEnd(parts: AnswerParts): Buffer {
  if (parts.length === 1) return parts[0]!;
  let total = 0;
  for (const part of parts) total += part.length;
  if (total > SCRATCH_LIMIT_BYTES) return joinParts(parts);
  if (scratch.length < total) scratch = Buffer.allocUnsafe(Math.min(SCRATCH_LIMIT_BYTES, Math.max(total, scratch.length * 2, 64 * 1024)));
  let offset = 0;
  for (const part of parts) offset += part.copy(scratch, offset);
  return scratch.subarray(0, total);
}

export function createRpcServers(options: RpcServerOptions): RpcServers {
  const { context, log, fillHistory } = options;
  const { requests, lagging, refusedFrames, notifications, connections } = options.metrics;
  const faults = requestFaults(options.metrics, log);
  const dispatchOn = (listener: ListenerName): DispatchOptions => ({
    onInternalError: (error, method) => faults.record(listener, newRequestId(), error, { method }),
  });
  const httpDispatch = dispatchOn('rpc_http');
  const wsDispatch = dispatchOn('rpc_ws');
  const hub = new SubscriptionHub(context.chain, { maxBufferedBytes: options.wsMaxBufferedBytes, maxSubscriptionsPerConnection: options.maxSubscriptionsPerConnection }, {
    onLagging: () => lagging.inc(),
    onSent: (count) => notifications.inc(count),
    onProblem: (message, fields) => log.warn(message, fields),
  });
  const inFlight = { count: 0 };

  const http = uWS.App();
  http.post('/*', (res, req) => {
    const state = { aborted: false };
    const finish = (status: string, body: Buffer | AnswerParts | undefined) => {
      if (state.aborted) return;
      state.aborted = true;
      inFlight.count -= 1;
      requests.inc({ transport: 'http' });
      res.cork(() => {
        res.writeStatus(status);
        if (body === undefined) {
          // Notifications only: an empty body, with its length, or a keep-alive client waits for more.
          res.end();
          return;
        }
        res.writeHeader('content-type', JSON_TYPE);
        res.end(Buffer.isBuffer(body) ? body : joinedForEnd(body));
      });
    };
    /** The request boundary: whatever throws while this request is handled is answered -32603 here. */
    const fail = (error: unknown) => {
      const requestId = faults.record('rpc_http', newRequestId(), error);
      if (state.aborted) return;
      try {
        finish('500 Internal Server Error', errorAnswer(internalError(requestId)));
      } catch {
        res.close();
      }
    };
    inFlight.count += 1;
    res.onAborted(() => {
      if (!state.aborted) inFlight.count -= 1;
      state.aborted = true;
    });
    try {
      const declared = Number(req.getHeader('content-length') || '0');
      if (declared > options.maxBodyBytes) return finish('413 Payload Too Large', tooLargeBody(options.maxBodyBytes));
      const type = req.getHeader('content-type');
      if (!isJsonType(type)) return finish('415 Unsupported Media Type', errorAnswer(new RpcError(-32600, `JSON-RPC requests are sent as content-type application/json, not ${type === '' ? 'without one' : type}`)));
    } catch (error) {
      return fail(error);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.aborted) return;
      try {
        size += chunk.byteLength;
        if (size > options.maxBodyBytes) return finish('413 Payload Too Large', tooLargeBody(options.maxBodyBytes));
        chunks.push(Buffer.from(chunk.slice(0)));
        if (!isLast) return;
        const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
        if (!fillHistory) return finish('200 OK', answerBodyParts(context, body, httpDispatch));
        const holes: HoleRequest[] = [];
        const first = answerBodyParts(context, body, { ...httpDispatch, holes });
        if (holes.length === 0) return finish('200 OK', first);
        // Blocks below the recorded chain: the history lane records them, then the body is answered again.
        fillHistory(holes).then((holeFailure) => answerBodyParts(readFresh(context), body, { ...httpDispatch, holeFailure })).then((answer) => finish('200 OK', answer), fail);
      } catch (error) {
        fail(error);
      }
    });
  });
  http.any('/*', (res) => {
    res.cork(() => {
      res.writeStatus('405 Method Not Allowed');
      res.writeHeader('allow', RPC_HTTP_METHODS.join(', '));
      res.writeHeader('content-type', JSON_TYPE);
      res.end(errorAnswer(new RpcError(-32600, 'JSON-RPC requests are POSTed')));
    });
  });

  const ws = uWS.App();
  const payloadLimit = options.maxBodyBytes;
  ws.ws<SocketData>('/*', {
    maxPayloadLength: wsPayloadCeiling(payloadLimit),
    // Never let uWS drop a frame on its own: the hub closes a lagging client with 1013 first.
    maxBackpressure: options.wsMaxBufferedBytes * 4 + wsPayloadCeiling(payloadLimit),
    idleTimeout: 120,
    sendPingsAutomatically: true,
    open: (socket) => {
      connections.inc();
      socket.getUserData().connection = hub.openConnection({
        send: (text) => socket.send(text, false) !== 2,
        bufferedBytes: () => socket.getBufferedAmount(),
        close: (code, reason) => socket.end(code, reason),
      });
    },
    message: (socket, message, isBinary) => {
      const connection = socket.getUserData().connection!;
      if (connection.closed) return;
      const refuse = (code: number, reason: string) => {
        refusedFrames.inc({ code: String(code) });
        hub.closeConnection(connection);
        socket.end(code, reason);
      };
      try {
        if (message.byteLength > payloadLimit) return refuse(CLOSE_MESSAGE_TOO_BIG, `frame exceeds ${payloadLimit} bytes`);
        const bytes = Buffer.from(message);
        // uWS checks the UTF-8 of text frames itself; a binary frame carrying a request is held to the same rule.
        if (isBinary && !isUtf8(bytes)) return refuse(CLOSE_INVALID_PAYLOAD, 'a request frame must be UTF-8 JSON');
        requests.inc({ transport: 'ws' });
        const transport = (method: string, params: readonly unknown[]) => {
          if (method === 'eth_subscribe') return hub.subscribe(connection, params);
          if (method === 'eth_unsubscribe') return hub.unsubscribe(connection, params);
          return undefined;
        };
        const send = (answer: Buffer | undefined) => {
          if (answer === undefined || connection.closed) return;
          if (socket.send(answer, false) === 2) {
            lagging.inc();
            socket.end(1013, 'answer dropped: the client is not reading; reconnect');
            hub.closeConnection(connection);
          }
        };
        if (!fillHistory) return send(answerBody(context, bytes, { ...wsDispatch, transport }));
        const holes: HoleRequest[] = [];
        const replay = memoized(transport);
        const first = answerBody(context, bytes, { ...wsDispatch, transport: replay.record, holes });
        if (holes.length === 0) return send(first);
        // The second pass replays the first pass's subscribe/unsubscribe results instead of running them twice; the
        // frame's memory belongs to uWS only during this callback, so the second pass reads a copy.
        const frame = Buffer.from(bytes);
        fillHistory(holes).then((holeFailure) => answerBody(readFresh(context), frame, { ...wsDispatch, transport: replay.replay, holeFailure })).then(send, (error: unknown) => {
          const requestId = faults.record('rpc_ws', newRequestId(), error);
          if (!connection.closed) socket.send(errorAnswer(internalError(requestId)), false);
        });
      } catch (error) {
        const requestId = faults.record('rpc_ws', newRequestId(), error);
        if (connection.closed) return;
        try {
          if (socket.send(errorAnswer(internalError(requestId)), false) === 2) throw new Error('answer dropped');
        } catch {
          hub.closeConnection(connection);
          socket.end(CLOSE_INTERNAL_ERROR, 'internal error');
        }
      }
    },
    close: (socket) => {
      connections.dec();
      const connection = socket.getUserData().connection;
      if (connection) hub.closeConnection(connection);
    },
  });
  // Anything on the WebSocket port that is not an upgrade (a plain GET, an upgrade without its key).
  ws.any('/*', (res) => {
    res.cork(() => {
      res.writeStatus('400 Bad Request');
      res.writeHeader('content-type', JSON_TYPE);
      res.end(errorAnswer(new RpcError(-32600, 'this port speaks JSON-RPC over WebSocket: send an upgrade request (Upgrade: websocket, Sec-WebSocket-Key, Sec-WebSocket-Version: 13)')));
    });
  });
  return { http, ws, hub, inFlight };
}

/** A transport's results recorded in call order by the first pass and handed back in that order by the second. */
function memoized(transport: TransportMethods): { record: TransportMethods; replay: TransportMethods } {
  const results: Array<{ readonly ok: boolean; readonly value: unknown }> = [];
  let next = 0;
  return {
    record(method, params) {
      try {
        const value = transport(method, params);
        results.push({ ok: true, value });
        return value;
      } catch (error) {
        results.push({ ok: false, value: error });
        throw error;
      }
    },
    replay(method, params) {
      const result = results[next++];
      if (!result) return transport(method, params);
      if (!result.ok) throw result.value;
      return result.value as ReturnType<TransportMethods>;
    },
  };
}

/**
 * A body declared as JSON-RPC: a JSON media type (api/http.ts), or the two older names geth also
 * accepts. Anything else, a missing type included, is 415 as geth answers it: `text/plain` is what
 * any web page may send cross-site without a preflight.
 */
export function isJsonType(type: string): boolean {
  return isJsonMediaType(type, ['json-rpc', 'jsonrequest']);
}
