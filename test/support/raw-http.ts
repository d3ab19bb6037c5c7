/**
 * Raw HTTP/1.x exchanges over a TCP socket, for requests no HTTP client library would send (odd
 * request lines, missing Host, a hundred headers) and for pipelining.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly statusLine: string;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
}

/**
 * Writes `parts` to a fresh connection to 127.0.0.1:`port` (each part once the previous answer has
 * arrived, when `awaitEach`; all at once otherwise) and resolves with every bytes received until the
 * server closes. Rejects when the connection closes with nothing, or stays open 20 s.
 */
export function rawExchange(port: number, parts: readonly (string | Buffer)[], awaitEach = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const label = JSON.stringify(String(parts[0]).slice(0, 60));
    let received = '';
    const pending = [...parts];
    socket.setTimeout(20_000, () => socket.destroy(new Error(`no end of the answer to ${label} within 20 s; received ${JSON.stringify(received.slice(0, 200))}`)));
    socket.on('data', (chunk) => {
      received += String(chunk);
      if (awaitEach && pending.length > 0) socket.write(pending.shift()!);
    });
    socket.once('close', () => (received === '' ? reject(new Error(`closed without an answer: ${label}`)) : resolve(received)));
    socket.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' && received !== '' ? undefined : reject(error)));
    if (awaitEach) socket.write(pending.shift()!);
    else for (const part of pending.splice(0)) socket.write(part);
  });
}

/** The answers in `text`, in order (Content-Length-delimited bodies). */
export function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`an incomplete head: ${JSON.stringify(text.slice(at, at + 200))}`);
    const [statusLine, ...lines] = text.slice(at, end).split('\r\n');
    const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const));
    const length = Number(headers.get('content-length') ?? 0);
    answers.push({ status: Number(statusLine!.split(' ')[1]), statusLine: statusLine!, headers, body: text.slice(end + 4, end + 4 + length) });
    at = end + 4 + length;
  }
  return answers;
}

/** Sends raw request bytes and resolves with the status line of the first answer. */
export async function statusLineOf(port: number, request: string): Promise<string> {
  return (await rawExchange(port, [request])).split('\r\n')[0]!;
}
