/**
 * A DNS server on 127.0.0.1 (UDP, a free port) answering TXT queries from a fixed zone: enough of RFC 1035 for a
 * real resolver (node:dns / c-ares) to sync an EIP-1459 tree from it. Unknown names answer NXDOMAIN.
 */
import { createSocket, type Socket } from 'node:dgram';

export interface DnsStub {
  readonly address: string;
  readonly queries: string[];
  close(): Promise<void>;
}

function readName(message: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let at = offset;
  for (;;) {
    const length = message[at]!;
    if (length === 0) return { name: labels.join('.'), end: at + 1 };
    labels.push(message.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
}

function txtData(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const chunk = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (bytes.length === 0) break;
  }
  return Buffer.concat(parts);
}

function answer(query: Buffer, zone: ReadonlyMap<string, string>): { reply: Buffer; name: string } {
  const { name, end } = readName(query, 12);
  const qtype = query.readUInt16BE(end);
  const question = query.subarray(12, end + 4);
  const text = zone.get(name.toLowerCase());
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  const found = text !== undefined && qtype === 16;
  header.writeUInt16BE(0x8400 | (text === undefined ? 3 : 0), 2); // response, authoritative; NXDOMAIN when unknown
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(found ? 1 : 0, 6);
  if (!found) return { reply: Buffer.concat([header, question]), name };
  const data = txtData(text);
  const record = Buffer.alloc(12);
  record.writeUInt16BE(0xc00c, 0); // pointer to the question's name
  record.writeUInt16BE(16, 2);
  record.writeUInt16BE(1, 4);
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(data.length, 10);
  return { reply: Buffer.concat([header, question, record, data]), name };
}

export async function startDnsStub(zone: ReadonlyMap<string, string>): Promise<DnsStub> {
  const lower = new Map([...zone].map(([name, text]) => [name.toLowerCase(), text]));
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  socket.on('message', (query, remote) => {
    try {
      const { reply, name } = answer(query, lower);
      queries.push(name.toLowerCase());
      socket.send(reply, remote.port, remote.address);
    } catch {
      // a malformed query gets no answer
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
