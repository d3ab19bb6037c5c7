/**
 * An `eth_subscribe("newHeads")` WebSocket subscription used only as a wake-up: each notification calls `onHead`,
 * and the follower polls at once instead of waiting for its interval. The poll stays the source of truth, so a
 * lost or missed notification costs at most one poll interval. A dropped connection is reopened with backoff.
 */
import WebSocket from 'ws';
import { retryDelay, type BackoffPolicy } from './backoff.js';
import { parseEndpoint } from './endpoint.js';
import { UpstreamError } from './errors.js';

export interface NewHeadsOptions {
  readonly url: string;
  readonly onHead: () => void;
  /** A connection failed or the subscription was refused; the subscription reconnects by itself. */
  readonly onError: (error: UpstreamError) => void;
  readonly reconnect: BackoffPolicy;
  readonly handshakeTimeoutMs: number;
}

export interface NewHeadsSubscription {
  /** Closes the socket and stops reconnecting; synchronous so it is safe in an abort path. */
  close(): void;
}

const SUBSCRIBE_ID = 1;

export function subscribeNewHeads(options: NewHeadsOptions): NewHeadsSubscription {
  const endpoint = parseEndpoint(options.url, 'ws');
  let socket: WebSocket | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  let failures = 0;
  let closed = false;

  const fail = (failure: 'transport' | 'rpc' | 'response', detail: string, code?: number) => {
    if (closed) return;
    options.onError(new UpstreamError({
      method: 'eth_subscribe', url: endpoint.display, failure, attempts: failures + 1, code, detail: endpoint.redact(detail),
    }));
  };

  const onMessage = (ws: WebSocket, data: WebSocket.RawData) => {
    let message: { id?: unknown; method?: unknown; error?: { code?: unknown; message?: unknown } };
    try {
      message = JSON.parse(data.toString()) as typeof message;
    } catch {
      return fail('response', 'a WebSocket message that is not JSON');
    }
    if (message.method === 'eth_subscription') return options.onHead();
    if (message.id !== SUBSCRIBE_ID) return;
    if (message.error) {
      fail('rpc', String(message.error.message ?? 'subscription refused'), typeof message.error.code === 'number' ? message.error.code : undefined);
      ws.close();
      return;
    }
    failures = 0;
  };

  const connect = () => {
    retryTimer = null;
    const ws = new WebSocket(endpoint.requestUrl, { headers: endpoint.headers, handshakeTimeout: options.handshakeTimeoutMs });
    socket = ws;
    ws.on('open', () => ws.send(JSON.stringify({ jsonrpc: '2.0', id: SUBSCRIBE_ID, method: 'eth_subscribe', params: ['newHeads'] })));
    ws.on('message', (data) => onMessage(ws, data));
    ws.on('error', (error) => fail('transport', error.message));
    ws.on('close', () => {
      socket = null;
      if (closed) return;
      failures += 1;
      retryTimer = setTimeout(connect, retryDelay(failures, options.reconnect));
    });
  };

  connect();
  return {
    close() {
      closed = true;
      if (retryTimer !== null) clearTimeout(retryTimer);
      socket?.terminate();
      socket = null;
    },
  };
}
