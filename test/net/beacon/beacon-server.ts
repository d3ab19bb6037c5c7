/** A Beacon API test server on 127.0.0.1 (free port): routes are path → JSON (or a status); anything else is 404. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Route = unknown | { readonly status: number };

export interface TestBeaconServer {
  readonly url: string;
  /** Replace or add routes while the server runs. */
  routes: Map<string, Route>;
  /** Paths requested so far (with query). */
  readonly requests: string[];
  close(): Promise<void>;
}

const isStatus = (route: Route): route is { status: number } => typeof route === 'object' && route !== null && Object.keys(route).length === 1 && Object.hasOwn(route, 'status');

export async function startBeaconServer(routes: Map<string, Route>): Promise<TestBeaconServer> {
  const requests: string[] = [];
  const state = { routes };
  const server: Server = createServer((request, response) => {
    const url = request.url ?? '/';
    requests.push(url);
    const path = url.split('?')[0]!;
    const route = state.routes.has(url) ? state.routes.get(url) : state.routes.get(path);
    if (route === undefined) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 404, message: 'not found' }));
    } else if (isStatus(route)) {
      response.writeHead(route.status).end();
    } else {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get routes() { return state.routes; },
    set routes(next) { state.routes = next; },
    requests,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
