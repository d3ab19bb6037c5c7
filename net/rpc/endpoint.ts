/**
 * An upstream URL split into what is sent and what may be shown. fetch refuses URLs that carry credentials, so
 * `user:password@` becomes a Basic `authorization` header; the query (often an API key) stays in the request URL
 * and is never shown: `display` and `redact` are what logs and error messages use.
 */
import { redactUrl } from '../../runtime/log.js';
import { InvalidEndpointError } from './errors.js';

export interface Endpoint {
  /** The URL to request, without userinfo. */
  readonly requestUrl: string;
  /** Headers the credentials turned into (empty without credentials). */
  readonly headers: Readonly<Record<string, string>>;
  /** Safe to log: no credentials, query or fragment. */
  readonly display: string;
  /** Replaces every occurrence of the secret-bearing URL forms in `text` by `display`. */
  redact(text: string): string;
}

const PROTOCOLS = { http: ['http:', 'https:'], ws: ['ws:', 'wss:'] } as const;

export function parseEndpoint(url: string, scheme: 'http' | 'ws'): Endpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidEndpointError(scheme, 'not a URL');
  }
  if (!(PROTOCOLS[scheme] as readonly string[]).includes(parsed.protocol)) {
    throw new InvalidEndpointError(scheme, `unsupported protocol ${parsed.protocol}`);
  }
  const headers: Record<string, string> = {};
  const credentials = [parsed.username, parsed.password].filter((part) => part !== '');
  if (credentials.length > 0) {
    const basic = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  const query = parsed.search;
  parsed.username = '';
  parsed.password = '';
  const requestUrl = parsed.toString();
  const display = redactUrl(url);
  const fragments = [query, ...credentials].filter((part) => part.length > 1);
  const redact = (text: string): string => {
    const withoutUrls = [url, requestUrl].reduce((out, whole) => out.split(whole).join(display), text);
    return fragments.reduce((out, fragment) => out.split(fragment).join('[redacted]'), withoutUrls);
  };
  return { requestUrl, headers, display, redact };
}
