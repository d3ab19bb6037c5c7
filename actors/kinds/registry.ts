/**
 * The built-in processor kinds, by their `[[processors]] kind`. Adding a built-in kind is one folder
 * (`actors/kinds/<kind>/index.ts` default-exporting its `defineProcessorKind`) and one line here.
 */
import type { KindSurface } from '../../api/aggregate/kind-surface.js';
import type { ProcessorKindInfo } from '../../api/aggregate/configured-processors.js';
import type { ProcessorKind } from './sdk/kind.js';
import blobs from './blobs/index.js';
import erc20 from './erc20/index.js';
import amm from './amm/index.js';

export const BUILTIN_KINDS: ReadonlyMap<string, ProcessorKind> = new Map([blobs, erc20, amm].map((kind) => [kind.name, kind]));

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
