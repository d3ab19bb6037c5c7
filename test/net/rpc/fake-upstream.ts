/**
 * A scripted HTTP front for a real upstream, for failure injection: each request takes the next scripted behaviour
 * (an HTTP status, a hang, a dropped connection, a fixed body) and, when the script is empty, is forwarded to the
 * real node. It records what each request looked like, and can be switched down (every request fails) and up again.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Behaviour =
  | { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  | { readonly hang: true }
  | { readonly drop: true }
  | { readonly json: unknown }
  /** A JSON-RPC answer carrying the request's id. */
  | { readonly result: unknown }
  | { readonly error: { readonly code: number; readonly message: string } };

export interface SeenRequest {
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: string;
}

export interface FakeUpstream {
  readonly url: string;
  readonly port: number;
  readonly seen: SeenRequest[];
  script(...behaviours: Behaviour[]): void;
  /** While down, every request gets `behaviour` (default: HTTP 503). */
  down(behaviour?: Behaviour): void;
  up(): void;
  close(): Promise<void>;
}

export async function startFakeUpstream(target: string): Promise<FakeUpstream> {
  const queue: Behaviour[] = [];
  const seen: SeenRequest[] = [];
  let outage: Behaviour | null = null;
  const server: Server = createServer((request, response) => {
    void readBody(request).then(async (body) => {
      seen.push({ url: request.url ?? '', authorization: request.headers.authorization, body });
      const behaviour = outage ?? queue.shift();
      if (behaviour === undefined) {
        const forwarded = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        response.writeHead(forwarded.status, { 'content-type': 'application/json' }).end(await forwarded.text());
      } else if ('hang' in behaviour) {
        return;
      } else if ('drop' in behaviour) {
        request.socket.destroy();
      } else if ('json' in behaviour) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.json));
      } else if ('result' in behaviour || 'error' in behaviour) {
        const { id } = JSON.parse(body) as { id: unknown };
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...behaviour }));
      } else {
        response.writeHead(behaviour.status, behaviour.headers ?? {}).end(behaviour.body ?? '');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    seen,
    script: (...behaviours) => void queue.push(...behaviours),
    down: (behaviour = { status: 503, body: 'upstream down for the test' }) => { outage = behaviour; },
    up: () => { outage = null; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => { body += chunk; });
    request.on('end', () => resolve(body));
    request.on('error', reject);
  });
}
