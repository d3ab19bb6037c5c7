/**
 * The HTTP guard (native/http-guard): answers, on the node's own listening ports, the requests the
 * web server (uWebSockets.js 20.30) would drop or leave hanging — an HTTP/1.0 or version-less
 * request line, HTTP/1.1 without `Host`, a method it does not parse, more than 48 header fields, a
 * head over 16 KiB, malformed lines — with 400 / 405 / 431 / 505 in the spec's error shape.
 *
 * It works inside uWS's own reads (the addon points the uWS binary's `recv` and `accept4` imports at
 * its checker), so a listener registers its port after binding it. Without the addon (not built,
 * `CDN_HTTP_GUARD=off`, another platform) the listeners work as before and the odd requests get no
 * answer; the node says so once per listener worker, and README's reverse-proxy settings cover them.
 */
import { loadNativeAddon } from '../runtime/native-addon.js';

interface GuardAddon {
  install(binarySuffix: string): string | null;
  listen(port: number, name: string, allow: string): void;
  stats(): { listener: string; port: number; reason: string; count: number }[];
  check(chunks: Uint8Array[]): { reason: string; chunk: number; start: number; method: string };
  reasons(): string[];
}

const loaded = loadNativeAddon<GuardAddon>('http-guard', 'http_guard', import.meta.url);

/** The uWS binary this process loads (uWebSockets.js picks it by platform, arch and Node ABI). */
const UWS_BINARY = `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;

let installation: string | null | undefined;

/**
 * Installs the guard in this process (once; every later call answers the same). Null when the
 * guard is active, else why not. uWS must already be loaded (importing `uWebSockets.js` does it).
 */
export function installHttpGuard(): string | null {
  if (installation !== undefined) return installation;
  if (process.env.CDN_HTTP_GUARD === 'off') installation = 'CDN_HTTP_GUARD=off';
  else if (loaded.addon === null) installation = loaded.reason ?? 'native/http-guard is not available';
  else installation = loaded.addon.install(UWS_BINARY);
  return installation;
}

/** Which listener a port is, and the methods it serves (the `Allow` of a 405). */
export interface GuardedListener {
  readonly name: 'api' | 'rpc_http' | 'rpc_ws';
  readonly allow: readonly string[];
}

/** Guards a bound port; null when guarded, else why not (the guard is not active). */
export function guardPort(port: number, listener: GuardedListener): string | null {
  const missing = installHttpGuard();
  if (missing !== null) return missing;
  loaded.addon!.listen(port, listener.name, listener.allow.join(', '));
  return null;
}

/** Requests the guard refused in this process, by listener and reason. */
export function httpGuardStats(): { listener: string; port: number; reason: string; count: number }[] {
  // The counters are the process's (every worker's listeners), so any thread may read them.
  return loaded.addon?.stats() ?? [];
}

/** The head checker alone, over successive reads (tests); null without the addon. */
export function checkHeads(chunks: Uint8Array[]): { reason: string; chunk: number; start: number; method: string } | null {
  return loaded.addon?.check(chunks) ?? null;
}

export function httpGuardAvailable(): string | null {
  return loaded.addon === null ? loaded.reason ?? 'not built' : null;
}
