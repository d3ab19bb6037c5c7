/** A loopback TCP proxy a test can cut, to drop an SSE connection the way a network failure does. */
import type { TestContext } from 'node:test';
import { createServer, connect, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  /** Destroys every open connection; new ones are accepted. */
  cut(): void;
  connections(): number;
}

export async function startTcpProxy(t: TestContext, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of open) socket.destroy();
  };
  t.after(() => {
    cut();
    server.close();
  });
  const address = server.address();
  if (typeof address !== 'object' || !address) throw new Error('proxy has no address');
  return { port: address.port, cut, connections: () => open.size / 2 };
}
