/**
 * Loading one of the project's own Node-API addons (`native/<name>/build/Release/<file>.node`, built by `npm ci`):
 * found by walking up from the calling module (run from `dist/<folder>/`, `dist/bundle/` or the source tree), loaded
 * once by the caller, and never fatal — without it the caller keeps its portable path and says why.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface NativeAddonLoad<T> {
  readonly addon: T | null;
  /** Why the addon is not used (not built, failed to load), when it is not. */
  readonly reason?: string;
}

/** How far above the calling module the project's `native/` folder may be (dist/net/eth/ is three levels down). */
const MAX_LEVELS = 4;

export function loadNativeAddon<T>(name: string, file: string, from: string): NativeAddonLoad<T> {
  const require = createRequire(from);
  let dir = dirname(fileURLToPath(from));
  for (let level = 0; level <= MAX_LEVELS; level += 1, dir = dirname(dir)) {
    const path = join(dir, 'native', name, 'build', 'Release', `${file}.node`);
    if (!existsSync(path)) continue;
    try {
      return { addon: require(path) as T };
    } catch (error) {
      return { addon: null, reason: `native/${name} failed to load (${(error as Error).message})` };
    }
  }
  return { addon: null, reason: `native/${name} is not built (npm ci builds it; see docs/native-addons.md)` };
}
