import type { Handler, Method } from './http.js';

/** One route of the HTTP surface. `open` routes need no API bearer (spec §5.4). */
export interface Route {
  readonly method: Method;
  /** uWS pattern, e.g. `/v1/processors/:processor/status`. */
  readonly pattern: string;
  readonly open: boolean;
  readonly handler: Handler;
}

/** Matches a concrete path against a uWS pattern (`:name` matches one segment, `*` the rest). */
export function patternMatches(pattern: string, path: string): boolean {
  const want = pattern.split('/');
  const have = path.split('/');
  for (let i = 0; i < want.length; i += 1) {
    if (want[i] === '*') return true;
    if (i >= have.length) return false;
    if (want[i]!.startsWith(':')) {
      if (have[i] === '') return false;
      continue;
    }
    if (want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}
