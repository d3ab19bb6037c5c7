/**
 * A small consumer client for the e2e tests: the consumer routes over fetch, with the credential
 * header (and the API bearer when given). Every call returns status and parsed body.
 */
export interface ConsumerView {
  id: string; role: string; leaseTtlSeconds: number;
  lease: { expiresAt: string; active: boolean };
  delivered: { sequence: string; cursor: string };
  acknowledged: { sequence: string; cursor: string };
}

export interface Envelope {
  sequence: string; cursor: string; operation: string; kind: string; key: string | null;
  block: { number: number; hash: string } | null;
  data: unknown;
}

export interface ChangeBatch { data: Envelope[]; nextCursor: string | null; consumer: ConsumerView }

export interface Reply<T> { status: number; body: T }

export interface ErrorReply { error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown> } }

export class ConsumerClient {
  constructor(readonly base: string, readonly processor = 'blobs', readonly bearer: string | null = null) {}

  private async call<T>(method: string, path: string, options: { credential?: string; body?: unknown } = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = {};
    if (this.bearer) headers.authorization = `Bearer ${this.bearer}`;
    if (options.credential !== undefined) headers['x-node-consumer-credential'] = options.credential;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.base}/v1/processors/${this.processor}/consumers${path}`, {
      method, headers, ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? null : JSON.parse(text)) as T };
  }

  create(body: Record<string, unknown>): Promise<Reply<ConsumerView & ErrorReply>> {
    return this.call('POST', '', { body });
  }

  list(): Promise<Reply<{ data: ConsumerView[] }>> {
    return this.call('GET', '');
  }

  get(id: string, credential?: string): Promise<Reply<ConsumerView & ErrorReply>> {
    return this.call('GET', `/${id}`, credential === undefined ? {} : { credential });
  }

  remove(id: string, credential?: string): Promise<Reply<ErrorReply | null>> {
    return this.call('DELETE', `/${id}`, credential === undefined ? {} : { credential });
  }

  changes(id: string, credential: string | undefined, limit = 100): Promise<Reply<ChangeBatch & ErrorReply>> {
    return this.call('GET', `/${id}/changes?limit=${limit}`, credential === undefined ? {} : { credential });
  }

  ack(id: string, credential: string | undefined, cursor: string): Promise<Reply<ConsumerView & ErrorReply>> {
    return this.call('POST', `/${id}/ack`, { ...(credential === undefined ? {} : { credential }), body: { cursor } });
  }

  lease(id: string, credential: string | undefined, redeliver = false): Promise<Reply<ConsumerView & ErrorReply>> {
    return this.call('POST', `/${id}/lease`, { ...(credential === undefined ? {} : { credential }), body: { redeliver } });
  }
}

export function consumerBody(id: string, credential: string, start: Record<string, unknown> = { position: 'earliest_retained' }, role = 'required', leaseTtlSeconds = 60) {
  return { id, role, start, leaseTtlSeconds, credential };
}
