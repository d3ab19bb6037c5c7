/**
 * NAT-PMP client (RFC 6886): requests over UDP to the gateway's port 5351 — the external address (opcode 0) and
 * UDP/TCP mappings (opcodes 1 and 2; lifetime 0 deletes) — each retransmitted from 250 ms, doubling, four times
 * (RFC 6886 §3.1 allows up to nine; four keeps one attempt under 4 s and the lane retries on its own schedule).
 * The default gateway is read from Linux's routing table (/proc/net/route) when none is given.
 */
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { GatewayError, withSignal, type MappingGranted, type MappingProtocol, type NatGateway } from './gateway.js';

export const NAT_PMP_PORT = 5351;
const FIRST_TIMEOUT_MS = 250;
const TRANSMISSIONS = 4;

const RESULT_CODES: Readonly<Record<number, string>> = {
  1: 'unsupported version', 2: 'not authorized or refused', 3: 'network failure', 4: 'out of resources', 5: 'unsupported opcode',
};

/** The IPv4 default gateway of Linux's main routing table, or null (no default route, or not Linux). */
export function defaultGateway(routeTable = '/proc/net/route'): string | null {
  let text: string;
  try {
    text = readFileSync(routeTable, 'utf8');
  } catch {
    return null;
  }
  for (const line of text.split('\n').slice(1)) {
    const [, destination, gateway, flags] = line.trim().split(/\s+/);
    if (destination !== '00000000' || !gateway || !flags || (parseInt(flags, 16) & 0x2) === 0) continue;
    const value = parseInt(gateway, 16);
    // The table is in host byte order (little-endian): the lowest byte is the first octet.
    return [value & 0xff, (value >>> 8) & 0xff, (value >>> 16) & 0xff, value >>> 24].join('.');
  }
  return null;
}

export class PmpGateway implements NatGateway {
  readonly protocol = 'pmp' as const;

  private constructor(readonly gateway: string, readonly internalAddress: string, private readonly port: number) {}

  /** A gateway at `gateway` (this host's address toward it is read from a connected socket). */
  static async at(gateway: string, port = NAT_PMP_PORT): Promise<PmpGateway> {
    const socket = createSocket('udp4');
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.connect(port, gateway, () => resolve());
      });
      return new PmpGateway(gateway, socket.address().address, port);
    } finally {
      socket.close();
    }
  }

  async externalIp(signal: AbortSignal): Promise<string> {
    const answer = await this.ask(Buffer.from([0, 0]), 0, 12, signal);
    const ip = [...answer.subarray(8, 12)].join('.');
    if (ip === '0.0.0.0') throw new GatewayError('the NAT-PMP gateway reports no external address (0.0.0.0)');
    return ip;
  }

  async addMapping(protocol: MappingProtocol, internalPort: number, externalPort: number, leaseSeconds: number, signal: AbortSignal): Promise<MappingGranted> {
    const answer = await this.ask(mapRequest(protocol, internalPort, externalPort, leaseSeconds), protocol === 'udp' ? 1 : 2, 16, signal);
    const granted = { internal: answer.readUInt16BE(8), external: answer.readUInt16BE(10), lifetime: answer.readUInt32BE(12) };
    if (granted.internal !== internalPort) throw new GatewayError(`the NAT-PMP gateway answered for internal port ${granted.internal}, not ${internalPort}`);
    return { externalPort: granted.external, leaseSeconds: granted.lifetime };
  }

  async deleteMapping(protocol: MappingProtocol, internalPort: number, _externalPort: number, signal: AbortSignal): Promise<void> {
    await this.ask(mapRequest(protocol, internalPort, 0, 0), protocol === 'udp' ? 1 : 2, 16, signal);
  }

  /** Sends `request` until an answer to `opcode` of at least `size` bytes arrives; refusals throw GatewayError. */
  private async ask(request: Buffer, opcode: number, size: number, signal: AbortSignal): Promise<Buffer> {
    const socket = createSocket('udp4');
    let timer: NodeJS.Timeout | null = null;
    try {
      const answer = new Promise<Buffer>((resolve, reject) => {
        socket.on('message', (message, from) => {
          if (from.address !== this.gateway || from.port !== this.port || message.length < 4 || message[0] !== 0 || message[1] !== 128 + opcode) return;
          const result = message.readUInt16BE(2);
          if (result !== 0) reject(new GatewayError(`NAT-PMP request refused: result ${result} (${RESULT_CODES[result] ?? 'unknown'})`, result));
          else if (message.length < size) reject(new GatewayError(`NAT-PMP answer of ${message.length} bytes, expected ${size}`));
          else resolve(message);
        });
        socket.on('error', reject);
        let wait = FIRST_TIMEOUT_MS;
        let sent = 0;
        const send = () => {
          if (sent === TRANSMISSIONS) {
            reject(new GatewayError(`no NAT-PMP answer from the gateway after ${TRANSMISSIONS} requests`));
            return;
          }
          sent++;
          socket.send(request, this.port, this.gateway);
          timer = setTimeout(send, wait);
          wait *= 2;
        };
        send();
      });
      return await withSignal(answer, signal);
    } finally {
      if (timer) clearTimeout(timer);
      socket.close();
    }
  }
}

function mapRequest(protocol: MappingProtocol, internalPort: number, externalPort: number, leaseSeconds: number): Buffer {
  const request = Buffer.alloc(12);
  request[0] = 0;
  request[1] = protocol === 'udp' ? 1 : 2;
  request.writeUInt16BE(internalPort, 4);
  request.writeUInt16BE(externalPort, 6);
  request.writeUInt32BE(leaseSeconds, 8);
  return request;
}
