/**
 * The client's request helper (spec §5, last paragraph): a path is resolved against the configured
 * node — relative paths (`processors/blobs/status`) against the configured base path, root paths
 * (`/v1/status`) against the origin — and anything that could leave that origin is refused BEFORE the
 * bearer token is attached: URL schemes (`https:`, `javascript:`), protocol-relative paths (`//host`),
 * backslash tricks (`/\host`) and any resolution that ends on another origin. The token is never
 * logged and never part of an error message.
 */

export interface NodeClientOptions {
  /** The node's aggregate API, e.g. `http://127.0.0.1:8080` or `https://edge.example/chain/` (base path `/chain/`). */
  readonly baseUrl: string;
  /** The API bearer token, when the node is configured with one. */
  readonly token?: string;
  /** Injected fetch (tests, proxies); the global fetch by default. */
  readonly fetch?: typeof fetch;
}

/** A request the helper refuses to send; nothing was sent and no credential was attached. */
export class UnsafeRequestPathError extends Error {
  constructor(reason: string) {
    super(`refused request path: ${reason}`);
    this.name = 'UnsafeRequestPathError';
  }
}

/** The spec error body (§7.1), or what the response said when it was not one. */
export class NodeHttpError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly retryable: boolean, readonly details?: Record<string, unknown>, readonly requestId?: string) {
    super(`${status} ${code}: ${message}`);
    this.name = 'NodeHttpError';
  }
}

const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export interface NodeClient {
  readonly origin: string;
  /** Resolves a path per the rules above; throws UnsafeRequestPathError. */
  resolve(path: string): URL;
  /** Sends a request to the node with the bearer attached; resolves with the response whatever its status. */
  request(path: string, init?: RequestInit): Promise<Response>;
  /** `request`, then the JSON body; a non-2xx answer throws NodeHttpError. */
  json<T = unknown>(path: string, init?: RequestInit): Promise<T>;
}

export function createNodeClient(options: NodeClientOptions): NodeClient {
  const base = new URL(options.baseUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UnsafeRequestPathError(`the base URL must be http or https, got ${base.protocol}`);
  if (base.username || base.password) throw new UnsafeRequestPathError('the base URL must not carry credentials; pass the token option');
  const basePath = new URL(base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`, base.origin);
  const doFetch = options.fetch ?? fetch;

  const resolve = (path: string): URL => {
    if (typeof path !== 'string' || path.length === 0) throw new UnsafeRequestPathError('the path is empty');
    if (SCHEME.test(path)) throw new UnsafeRequestPathError('a path must not carry a URL scheme');
    if (path.startsWith('//')) throw new UnsafeRequestPathError('protocol-relative paths are refused');
    if (path.includes('\\')) throw new UnsafeRequestPathError('backslashes are refused (browsers read them as slashes)');
    if (/[\u0000-\u001f\u007f]/.test(path)) throw new UnsafeRequestPathError('control characters are refused');
    const url = path.startsWith('/') ? new URL(path, base.origin) : new URL(path, basePath);
    if (url.origin !== base.origin) throw new UnsafeRequestPathError('the path resolves to another origin');
    return url;
  };

  const request = async (path: string, init: RequestInit = {}): Promise<Response> => {
    const url = resolve(path);
    const headers = new Headers(init.headers);
    if (options.token !== undefined) headers.set('authorization', `Bearer ${options.token}`);
    return doFetch(url, { ...init, headers, redirect: 'manual' });
  };

  return {
    origin: base.origin,
    resolve,
    request,
    async json<T>(path: string, init?: RequestInit): Promise<T> {
      const response = await request(path, init);
      if (!response.ok) throw await httpError(response);
      return (await response.json()) as T;
    },
  };
}

/** Reads a non-2xx response into a NodeHttpError (the spec's error body when there is one). */
export async function httpError(response: Response): Promise<NodeHttpError> {
  const text = await response.text().catch(() => '');
  try {
    const { error } = JSON.parse(text) as { error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown>; requestId?: string } };
    return new NodeHttpError(response.status, error.code, error.message, error.retryable, error.details, error.requestId);
  } catch {
    return new NodeHttpError(response.status, 'http_error', text.slice(0, 200) || response.statusText, response.status >= 500);
  }
}
