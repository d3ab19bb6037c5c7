/**
 * `seed_savepoint` of `[[processors]]`: checked by the root before any lane starts, so a savepoint
 * that cannot seed its processor (another chain, kind, version or options; a damaged or unreadable
 * file) stops start-up naming the key, the value and why. The processor lane seeds from it (see
 * actors/processor/savepoint.ts); a custom kind's fit is checked by its lane, which loads the module.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { decodeSavepoint } from '../../store/savepoints.js';
import { readSeed } from '../processor/savepoint.js';
import { builtinKind } from '../kinds/registry.js';
import type { ChainSpec } from './chain-spec.js';
import { ConfigError } from './config.js';
import type { NodeConfig } from './config-schema.js';
import { kindOptionsOf } from './processor-config.js';

/** The seeded processors' savepoint files as absolute paths, by processor id; throws ConfigError for one that does not fit. */
export function resolveSeeds(config: NodeConfig, configDir: string, spec: ChainSpec): Map<string, string> {
  const seeds = new Map<string, string>();
  const problems: Array<{ key: string; value: string; expected: string }> = [];
  config.processors.forEach((p, i) => {
    if (p.seed_savepoint === undefined) return;
    const path = resolve(configDir, p.seed_savepoint);
    try {
      if (p.kind === 'custom') {
        decodeSavepoint(readFileSync(path));
      } else {
        const kind = builtinKind(p.kind);
        readSeed(path, {
          chainId: spec.chainId, genesisHash: spec.genesis.hash,
          processor: { id: p.id, instance: p.instance ?? p.id, kind: kind.name, version: kind.version, changeSchema: kind.changeSchema, options: kindOptionsOf(p) },
        });
      }
      seeds.set(p.id, path);
    } catch (error) {
      problems.push({ key: `processors[${i}].seed_savepoint`, value: JSON.stringify(p.seed_savepoint), expected: `a savepoint archive that can seed processor '${p.id}': ${(error as Error).message}` });
    }
  });
  if (problems.length > 0) throw new ConfigError(problems);
  return seeds;
}
