/**
 * The built-in processor kinds, by their `[[processors]] kind`, and what the node derives from them: the
 * config's kind names and option keys (actors/node/processor-config.ts), the API's kind descriptors and code
 * surfaces. Adding a built-in kind is one folder (`actors/kinds/<kind>/index.ts` default-exporting its
 * `defineProcessorKind`, options schema included) and its line here: the only file that names the kinds.
 */
import type { KindSurface } from '../../api/aggregate/kind-surface.js';
import type { ProcessorKindInfo } from '../../api/aggregate/configured-processors.js';
import type { ProcessorKind } from './sdk/kind.js';
import type { OptionKey } from './sdk/options-schema.js';
import blobs from './blobs/index.js';
import erc20 from './erc20/index.js';
import amm from './amm/index.js';

export const BUILTIN_KINDS: ReadonlyMap<string, ProcessorKind> = new Map([blobs, erc20, amm].map((kind) => [kind.name, kind]));

/** A built-in kind's top-level `[[processors]]` key, with the kind that takes it. */
export interface BuiltinOptionKey {
  readonly kind: string;
  readonly option: OptionKey;
}

/** Every built-in kind's option keys, kind by kind in registry order (a key belongs to one kind). */
export const BUILTIN_OPTION_KEYS: ReadonlyMap<string, BuiltinOptionKey> = optionKeys(BUILTIN_KINDS.values());

function optionKeys(kinds: Iterable<ProcessorKind>): Map<string, BuiltinOptionKey> {
  const keys = new Map<string, BuiltinOptionKey>();
  for (const kind of kinds) {
    for (const [key, option] of Object.entries(kind.optionsSchema)) {
      const other = keys.get(key);
      if (other) throw new Error(`built-in kinds '${other.kind}' and '${kind.name}' both declare the option '${key}'`);
      keys.set(key, { kind: kind.name, option });
    }
  }
  return keys;
}

export function builtinKind(name: string): ProcessorKind {
  const kind = BUILTIN_KINDS.get(name);
  if (!kind) throw new Error(`unknown processor kind '${name}' (built-in kinds: ${[...BUILTIN_KINDS.keys()].join(', ')})`);
  return kind;
}

/** A kind's descriptor as data, for the API (travels with each configured processor). */
export function kindInfo(kind: ProcessorKind): ProcessorKindInfo {
  return {
    kind: kind.name,
    version: kind.version,
    changeSchema: kind.changeSchema,
    genericApi: 'processor-v1',
    deliveryOrdering: kind.deliveryOrdering,
    ordering: kind.ordering,
    queryExtensions: kind.queryExtensions.map((extension) => extension.name),
    schema: kind.schema,
    deltaSchema: kind.deltaSchema,
  };
}

/** The code surfaces of the built-in kinds, for a listener. */
export function builtinSurfaces(): ReadonlyMap<string, KindSurface> {
  return new Map([...BUILTIN_KINDS].map(([name, kind]) => [name, { collections: kind.collections, queryExtensions: kind.queryExtensions }]));
}
