/**
 * Where a configured processor's kind comes from: the built-in registry, or a user's module
 * (custom-kind.ts). The root loads custom modules once to describe them (a module that fails is
 * described as `custom` with its error and fails only its own lane); the processor lane, the listener
 * and the snapshots lane load the kind they need themselves.
 */
import { resolve } from 'node:path';
import type { ConfiguredProcessor } from '../../api/aggregate/configured-processors.js';
import type { KindSurface } from '../../api/aggregate/kind-surface.js';
import type { ProcessorKindInfo } from '../../api/aggregate/configured-processors.js';
import type { ProcessorKind } from './sdk/kind.js';
import { loadKindModule } from './custom-kind.js';
import { BUILTIN_KINDS, builtinKind, kindInfo } from './registry.js';

/** A processor's kind source: a built-in name, or a module path (absolute). */
export interface KindSource {
  readonly kind: string;
  readonly module?: string | undefined;
}

export function resolveKind(source: KindSource, cacheDir: string): Promise<ProcessorKind> {
  return source.module ? loadKindModule(source.module, cacheDir) : Promise.resolve(builtinKind(source.kind));
}

/** What the root learned of a custom module: its kind, or why it cannot be used. */
export interface CustomKindDescription {
  readonly module: string;
  readonly kind: ProcessorKind | null;
  readonly error: string | null;
}

export async function describeCustomKinds(processors: ReadonlyArray<{ id: string; kind: string; module?: string | undefined }>, configDir: string, cacheDir: string): Promise<Map<string, CustomKindDescription>> {
  const described = new Map<string, CustomKindDescription>();
  const moduleOfName = new Map<string, string>();
  for (const processor of processors) {
    if (processor.kind !== 'custom' || processor.module === undefined) continue;
    const module = resolve(configDir, processor.module);
    try {
      const kind = await loadKindModule(module, cacheDir);
      if (BUILTIN_KINDS.has(kind.name)) throw new Error(`processor module ${module} names its kind '${kind.name}', the name of a built-in kind`);
      const other = moduleOfName.get(kind.name);
      if (other !== undefined && other !== module) throw new Error(`processor module ${module} names its kind '${kind.name}', as ${other} does: kind names must be unique`);
      moduleOfName.set(kind.name, module);
      described.set(processor.id, { module, kind, error: null });
    } catch (error) {
      described.set(processor.id, { module, kind: null, error: (error as Error).message });
    }
  }
  return described;
}

/** The descriptor of a custom module that did not load: its lane fails at start and readiness says why. */
export function unloadedKindInfo(): ProcessorKindInfo {
  return { kind: 'custom', version: '0.0.0', changeSchema: 'custom', genericApi: 'processor-v1', deliveryOrdering: 'block_versioned_idempotent', ordering: 'block_local', queryExtensions: [], schema: {}, deltaSchema: null };
}

export function describedKindInfo(description: CustomKindDescription): ProcessorKindInfo {
  return description.kind ? kindInfo(description.kind) : unloadedKindInfo();
}

/** The built-in surfaces plus those of the configured custom modules that load here (others are left out, logged by the caller). */
export async function kindSurfaces(processors: readonly ConfiguredProcessor[], cacheDir: string, onError: (module: string, error: Error) => void): Promise<ReadonlyMap<string, KindSurface>> {
  const surfaces = new Map<string, KindSurface>([...BUILTIN_KINDS].map(([name, kind]) => [name, { collections: kind.collections, queryExtensions: kind.queryExtensions }]));
  for (const processor of processors) {
    if (!processor.module || surfaces.has(processor.kind)) continue;
    try {
      const kind = await loadKindModule(processor.module, cacheDir);
      surfaces.set(processor.kind, { collections: kind.collections, queryExtensions: kind.queryExtensions });
    } catch (error) {
      onError(processor.module, error as Error);
    }
  }
  return surfaces;
}
