/**
 * `[[sources.history]]` entries of kind "era" (actors/history/era-source.ts), checked and resolved when the
 * configuration is loaded: `path` (a directory of Era1 files) and `cache_dir` resolve against the config file's
 * folder, `cache_dir` defaults to <data_dir>/era1-cache/<id>, and a path that is not a readable directory holding
 * mainnet Era1 files stops start-up with the key, the value and what was expected.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEra1Name } from '../../net/era/era1-archive.js';
import type { NodeConfig } from './config-schema.js';
import { ConfigError } from './toml-config.js';

export function resolveEraSources(config: NodeConfig, configDir: string, dataDir: string): NodeConfig {
  const problems: Array<{ key: string; value: string; expected: string }> = [];
  const history = config.sources.history.map((source, index) => {
    if (source.kind !== 'era') return source;
    if (source.path === '') return { ...source, cache_dir: source.cache_dir === '' ? join(dataDir, 'era1-cache', source.id) : resolve(configDir, source.cache_dir) };
    const path = resolve(configDir, source.path);
    const problem = directoryProblem(path);
    if (problem !== null) problems.push({ key: `sources.history.${index}.path`, value: JSON.stringify(source.path), expected: problem });
    return { ...source, path };
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return { ...config, sources: { ...config.sources, history } };
}

/** What is wrong with `path` as a directory of mainnet Era1 files, or null. */
function directoryProblem(path: string): string | null {
  let names: string[];
  try {
    if (!statSync(path).isDirectory()) return `a directory of Era1 files (${path} is not a directory)`;
    names = readdirSync(path);
  } catch (error) {
    return `a readable directory of Era1 files (${(error as NodeJS.ErrnoException).code ?? (error as Error).message} for ${path})`;
  }
  if (!names.some((name) => parseEra1Name(name) !== null)) return `a directory holding mainnet Era1 files named mainnet-NNNNN-xxxxxxxx.era1 (${path} holds none)`;
  return null;
}
