/**
 * The JSON-RPC listeners on uWebSockets.js: HTTP (POST a request or a batch to any path) and
 * WebSocket (requests as text frames, plus `eth_subscribe` / `eth_unsubscribe`). No built-in
 * authentication (spec §5.5). Request bodies and frames are bounded by `[rpc] max_request_body_bytes`.
 */
import uWS from 'uWebSockets.js';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../../runtime/log.js';
import { errorFields } from '../../runtime/log.js';
import { answerBody, answerBodyParts, joinParts, type AnswerParts, type DispatchOptions } from './dispatch.js';
import type { RpcContext } from './rpc-context.js';
import { limitExceeded, RpcError } from './rpc-errors.js';
import { SubscriptionHub, type Connection } from './subscriptions.js';

export interface RpcServerOptions {
  readonly context: RpcContext;
  readonly maxBodyBytes: number;
  /** Bytes queued for one WebSocket client before it is closed with 1013. */
  readonly wsMaxBufferedBytes: number;
  readonly maxSubscriptionsPerConnection: number;
  readonly log: Logger;
  readonly metrics: Registry;
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

function tooLargeBody(limit: number): Buffer {
  const error = limitExceeded(`request body exceeds the limit of ${limit} bytes`, { limitBytes: limit });
  return Buffer.from(`{"jsonrpc":"2.0","id":null,"error":${error.toJson()}}`);
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
  const { context, log } = options;
  const requests = new Counter({ name: 'chain_node_rpc_requests_total', help: 'JSON-RPC bodies answered, by transport', labelNames: ['transport'], registers: [options.metrics] });
  const internalErrors = new Counter({ name: 'chain_node_rpc_internal_errors_total', help: 'JSON-RPC calls that failed inside the node', registers: [options.metrics] });
  const lagging = new Counter({ name: 'chain_node_rpc_ws_lagging_closed_total', help: 'WebSocket clients closed with 1013 for falling behind their event channel', registers: [options.metrics] });
  const notifications = new Counter({ name: 'chain_node_rpc_ws_notifications_total', help: 'Subscription notifications written to WebSocket clients', registers: [options.metrics] });
  const connections = new Gauge({ name: 'chain_node_rpc_ws_connections', help: 'Open JSON-RPC WebSocket connections', registers: [options.metrics] });
  const dispatch: DispatchOptions = {
    onInternalError: (error, method) => {
      internalErrors.inc();
      log.error('JSON-RPC call failed', { method, ...errorFields(error) });
    },
  };
  const hub = new SubscriptionHub(context.chain, { maxBufferedBytes: options.wsMaxBufferedBytes, maxSubscriptionsPerConnection: options.maxSubscriptionsPerConnection }, {
    onLagging: () => lagging.inc(),
    onSent: (count) => notifications.inc(count),
    onProblem: (message, fields) => log.warn(message, fields),
  });
  const inFlight = { count: 0 };

  const http = uWS.App();
  http.post('/*', (res, req) => {
    const declared = Number(req.getHeader('content-length') || '0');
    const state = { aborted: false };
    inFlight.count += 1;
    const finish = (status: string, body: Buffer | AnswerParts | undefined) => {
      if (state.aborted) return;
      state.aborted = true;
      inFlight.count -= 1;
      requests.inc({ transport: 'http' });
      res.cork(() => {
        res.writeStatus(status);
        if (body === undefined) {
          res.endWithoutBody();
          return;
        }
        res.writeHeader('content-type', JSON_TYPE);
        res.end(Buffer.isBuffer(body) ? body : joinedForEnd(body));
      });
    };
    res.onAborted(() => {
      if (!state.aborted) inFlight.count -= 1;
      state.aborted = true;
    });
    if (declared > options.maxBodyBytes) return finish('413 Payload Too Large', tooLargeBody(options.maxBodyBytes));
    const chunks: Buffer[] = [];
    let size = 0;
    res.onData((chunk, isLast) => {
      if (state.aborted) return;
      size += chunk.byteLength;
      if (size > options.maxBodyBytes) return finish('413 Payload Too Large', tooLargeBody(options.maxBodyBytes));
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      let answer: AnswerParts | Buffer | undefined;
      try {
        answer = answerBodyParts(context, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), dispatch);
      } catch (error) {
        dispatch.onInternalError?.(error, '(body)');
        answer = Buffer.from(`{"jsonrpc":"2.0","id":null,"error":${new RpcError(-32603, 'internal error').toJson()}}`);
      }
      finish('200 OK', answer);
    });
  });
  http.any('/*', (res) => {
    res.cork(() => {
      res.writeStatus('405 Method Not Allowed');
      res.writeHeader('allow', 'POST');
      res.writeHeader('content-type', JSON_TYPE);
      res.end(`{"jsonrpc":"2.0","id":null,"error":${new RpcError(-32600, 'JSON-RPC requests are POSTed').toJson()}}`);
    });
  });

  const ws = uWS.App();
  ws.ws<SocketData>('/*', {
    maxPayloadLength: options.maxBodyBytes,
    // Never let uWS drop a frame on its own: the hub closes a lagging client with 1013 first.
    maxBackpressure: options.wsMaxBufferedBytes * 4 + options.maxBodyBytes,
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
    message: (socket, message) => {
      const connection = socket.getUserData().connection!;
      if (connection.closed) return;
      requests.inc({ transport: 'ws' });
      const answer = answerBody(context, Buffer.from(message), {
        ...dispatch,
        transport: (method, params) => {
          if (method === 'eth_subscribe') return hub.subscribe(connection, params);
          if (method === 'eth_unsubscribe') return hub.unsubscribe(connection, params);
          return undefined;
        },
      });
      if (answer === undefined || connection.closed) return;
      if (socket.send(answer, false) === 2) {
        lagging.inc();
        socket.end(1013, 'answer dropped: the client is not reading; reconnect');
        hub.closeConnection(connection);
      }
    },
    close: (socket) => {
      connections.dec();
      const connection = socket.getUserData().connection;
      if (connection) hub.closeConnection(connection);
    },
  });
  return { http, ws, hub, inFlight };
}
