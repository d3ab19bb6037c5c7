/**
 * Reader of the ethereum/execution-apis conformance cases (`tests/<method>/<case>.io`, in
 * `../shared/fixtures/execution-apis/`): `//` comment lines (the first is the description; a line
 * `// speconly` marks a case whose response is compared by shape only), then one or more exchanges
 * of a `>>` request line and a `<<` response line, each one JSON-RPC message.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface IoExchange {
  readonly request: { readonly jsonrpc: string; readonly id: unknown; readonly method: string; readonly params?: unknown };
  readonly response: { readonly jsonrpc: string; readonly id: unknown; readonly result?: unknown; readonly error?: { code: number; message: string; data?: unknown } };
}

export interface IoCase {
  /** `<method folder>/<file name without .io>`. */
  readonly name: string;
  readonly method: string;
  readonly description: string;
  readonly specOnly: boolean;
  readonly exchanges: readonly IoExchange[];
}

export class IoFormatError extends Error {
  override name = 'IoFormatError';
}

export function parseIoCase(name: string, text: string): IoCase {
  const comments: string[] = [];
  const exchanges: IoExchange[] = [];
  let pending: IoExchange['request'] | null = null;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    const where = `${name}.io line ${index + 1}`;
    if (line === '') return;
    if (line.startsWith('//')) {
      comments.push(line.slice(2).trim());
      return;
    }
    const json = (body: string): Record<string, unknown> => {
      try {
        const value: unknown = JSON.parse(body);
        if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
        return value as Record<string, unknown>;
      } catch (error) {
        throw new IoFormatError(`${where}: ${(error as Error).message}`);
      }
    };
    if (line.startsWith('>>')) {
      if (pending) throw new IoFormatError(`${where}: a request follows a request without its response`);
      const request = json(line.slice(2));
      if (typeof request.method !== 'string') throw new IoFormatError(`${where}: the request has no method`);
      pending = request as unknown as IoExchange['request'];
      return;
    }
    if (line.startsWith('<<')) {
      if (!pending) throw new IoFormatError(`${where}: a response without a request`);
      const response = json(line.slice(2));
      if (!('result' in response) && !('error' in response)) throw new IoFormatError(`${where}: the response has neither result nor error`);
      exchanges.push({ request: pending, response: response as unknown as IoExchange['response'] });
      pending = null;
      return;
    }
    throw new IoFormatError(`${where}: expected a //, >> or << line`);
  });
  if (pending) throw new IoFormatError(`${name}.io: the last request has no response`);
  if (exchanges.length === 0) throw new IoFormatError(`${name}.io: no exchange`);
  return {
    name,
    method: name.split('/')[0]!,
    description: comments.find((c) => c !== 'speconly') ?? '',
    specOnly: comments.includes('speconly'),
    exchanges,
  };
}

/** Every case of the given method folders under `root`, sorted by name. */
export function readIoCases(root: string, methods?: readonly string[]): IoCase[] {
  const folders = readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && (methods === undefined || methods.includes(entry.name)))
    .map((entry) => entry.name);
  return folders.flatMap((folder) => readdirSync(join(root, folder))
    .filter((file) => file.endsWith('.io'))
    .map((file) => parseIoCase(`${folder}/${file.slice(0, -3)}`, readFileSync(join(root, folder, file), 'utf8'))))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Compares two JSON values by shape only (a `// speconly` case): the same JSON type at every position, the same
 * object keys, and for arrays the shape of each element of the actual against the first expected element. Returns
 * the first difference as a path and reason, or null.
 */
export function shapeDifference(expected: unknown, actual: unknown, path = '$'): string | null {
  const kind = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
  if (kind(expected) !== kind(actual)) return `${path}: expected ${kind(expected)}, got ${kind(actual)}`;
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (expected.length === 0 || actual.length === 0) return null;
    for (const [index, item] of actual.entries()) {
      const difference = shapeDifference(expected[0], item, `${path}[${index}]`);
      if (difference) return difference;
    }
    return null;
  }
  if (kind(expected) === 'object') {
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const missing = Object.keys(e).filter((key) => !(key in a));
    const extra = Object.keys(a).filter((key) => !(key in e));
    if (missing.length > 0 || extra.length > 0) return `${path}: keys differ (missing ${missing.join(',') || '-'}; extra ${extra.join(',') || '-'})`;
    for (const key of Object.keys(e)) {
      const difference = shapeDifference(e[key], a[key], `${path}.${key}`);
      if (difference) return difference;
    }
  }
  return null;
}
