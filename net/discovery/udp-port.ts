/** A UDP port on `host` that was free a moment ago (bound to 0, read, released): for discovery sockets that do not take 0. */
import { createSocket } from 'node:dgram';

export function freeUdpPort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, host, () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}
