/**
 * The baseline servers' side of server-process.ts: listen on a free loopback port, print
 * `{"port": N}`, and exit cleanly on SIGTERM.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export function listenAndAnnounce(server: Server, onStop: () => Promise<void> | void): void {
  server.listen(0, '127.0.0.1', 4096, () => {
    process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close();
    Promise.resolve(onStop()).then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`stopping failed: ${(error as Error).message}\n`);
        process.exit(1);
      },
    );
  });
}
