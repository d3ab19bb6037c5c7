/**
 * The processor instances this node is configured with, as the listener sees them (the root fills
 * them from `[[processors]]`), and lookups that answer 404 `not_found` for an unknown id.
 */
import { HttpError } from '../errors.js';
import type { ProcessorDescriptor } from '../../store/processor-descriptor.js';

/** A kind's identity and surfaces, as plain data (worker arguments carry it). */
export interface ProcessorKindInfo {
  /** The TOML `kind`. */
  readonly kind: string;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
  /** `block_local` or `ordered_state` (spec §2.1: ordered-state coverage adds reduceCursor, pendingThrough, seededFromCheckpoint). */
  readonly ordering: 'block_local' | 'ordered_state';
  /** Names of the typed query extensions (`/v1/processors/{id}/query/<name>`, alias `/v1/q/<name>`). */
  readonly queryExtensions: readonly string[];
  /** The kind's schema document (GET /v1/processors/{id}/schema). */
  readonly schema: unknown;
  /** The delta shape label of its artifacts, or null when the kind keeps none (no map/apply split). */
  readonly deltaSchema?: string | null;
}

export interface ConfiguredProcessor {
  /** Name in URLs (`/v1/processors/{id}`). */
  readonly id: string;
  /** The TOML `kind`. */
  readonly kind: string;
  /** Immutable instance identity: names its tables and is part of every cursor. */
  readonly instance: string;
  readonly output: 'entities' | 'none';
  readonly delivery: boolean;
  readonly startBlock: number | null;
  /** The kind's descriptor, filled from the kind registry by the root. */
  readonly info: ProcessorKindInfo;
  /** The kind's own `[[processors]]` options (e.g. erc20 `tokens`), as configured; its query extension reads them. */
  readonly options?: Readonly<Record<string, unknown>>;
  /** A user's kind: its module's absolute path (every lane that needs the kind's code loads it). */
  readonly module?: string;
  /**
   * Set when `instance` is a rebuild's replacement (store/rebuilds.ts): the name of its processor lane
   * (`processor.<laneId>`), which also resolves to exactly this instance in the registry. Absent: the lane is `id`'s.
   */
  readonly laneId?: string;
  /** `[processors.artifacts]` with `[budgets.artifacts]` (absent: retention none). */
  readonly artifacts?: ProcessorArtifactsConfig;
}

export interface ProcessorArtifactsConfig {
  readonly retention: 'none' | 'window' | 'full';
  readonly windowBlocks: number;
  /** The id of the processor whose artifacts this replay target takes, or null. */
  readonly replayFrom: string | null;
  readonly maxBytes: number;
  readonly maxPendingBlocks: number;
}

/** The name that resolves to exactly this instance (a replacement's instance id, else the processor id): what lanes are asked by. */
export function instanceAddress(processor: ConfiguredProcessor): string {
  return processor.laneId ?? processor.id;
}

/** What the registry asks about rebuilds (api/aggregate/serving-instances.ts reads them from the store). */
export interface ServingLookup {
  /** The instance a promote or rollback selected for processor `id`; undefined: the configured one. */
  serving(id: string): string | undefined;
  /** The rebuild whose replacement instance is `name`, if any. */
  replacement(name: string): { readonly id: string; readonly processor: string; readonly instance: string; readonly state: string; readonly rebuilding: boolean } | undefined;
}

export type { ProcessorDescriptor } from '../../store/processor-descriptor.js';

export interface ProcessorRegistry {
  /** Every configured processor, each with the instance serving it now. */
  readonly all: readonly ConfiguredProcessor[];
  /**
   * The processor with this id, with the instance serving it now; or a rebuild's replacement instance by its
   * instance id — 409 `processor_rebuilding` while it is rebuilt. 404 `not_found` otherwise.
   */
  byId(id: string): ConfiguredProcessor;
  find(id: string): ConfiguredProcessor | undefined;
  /**
   * The processors that claim the short alias `/v1/q/<name>` of query extension `name` (spec §4.4: installed when
   * exactly one claims it): those whose kind installs it, except replay targets (`[processors.artifacts]
   * replay_from`). A replay target follows no chain — its state is only what was replayed into it — so it keeps its
   * extension at its base path and never takes, or takes away, the alias of the processor it replays.
   */
  claimants(name: string): ConfiguredProcessor[];
}

function withInstance(processor: ConfiguredProcessor, instance: string): ConfiguredProcessor {
  return instance === processor.instance ? processor : { ...processor, instance, laneId: instance };
}

/** Without `lookup` (no store to read rebuilds from) every processor is its configured instance. */
export function createProcessorRegistry(processors: readonly ConfiguredProcessor[], lookup?: ServingLookup): ProcessorRegistry {
  const byId = new Map(processors.map((p) => [p.id, p]));
  const serving = (processor: ConfiguredProcessor): ConfiguredProcessor => withInstance(processor, lookup?.serving(processor.id) ?? processor.instance);
  const find = (id: string): ConfiguredProcessor | undefined => {
    const processor = byId.get(id);
    if (processor) return serving(processor);
    const replacement = lookup?.replacement(id);
    const base = replacement ? byId.get(replacement.processor) : undefined;
    if (!replacement || !base) return undefined;
    if (replacement.rebuilding) {
      throw new HttpError('processor_rebuilding', `instance '${id}' of processor '${base.id}' is being rebuilt (${replacement.id}, ${replacement.state}); it answers once it has caught up and its outputs are compared (GET /admin/v1/processors/${base.id}/rebuilds/${replacement.id})`, {
        processor: base.id, instance: id, rebuild: replacement.id, state: replacement.state,
      });
    }
    return withInstance(base, replacement.instance);
  };
  return {
    get all() {
      return lookup ? processors.map(serving) : processors;
    },
    byId(id) {
      const processor = find(id);
      if (!processor) throw new HttpError('not_found', `no processor '${id}' is configured on this node`, { processor: id });
      return processor;
    },
    find,
    claimants: (name) => processors.filter((p) => kindInfo(p).queryExtensions.includes(name) && !p.artifacts?.replayFrom),
  };
}

export function kindInfo(processor: ConfiguredProcessor): ProcessorKindInfo {
  return processor.info;
}

export function processorDescriptor(processor: ConfiguredProcessor): ProcessorDescriptor {
  const info = kindInfo(processor);
  return {
    id: processor.id,
    instance: processor.instance,
    kind: processor.kind,
    version: info.version,
    changeSchema: info.changeSchema,
    genericApi: info.genericApi,
    deliveryOrdering: info.deliveryOrdering,
    output: processor.output,
    delivery: processor.delivery,
  };
}

/** 409 `delivery_disabled` (non-retryable) for change head, change pages and streams of a processor without delivery. */
export function requireDelivery(processor: ConfiguredProcessor): void {
  if (!processor.delivery) {
    throw new HttpError('delivery_disabled', `processor '${processor.id}' is configured with delivery = false; it keeps no change feed`, { processor: processor.id });
  }
}

/** `output_not_retained` for queries of a processor configured with `output = none` (never an empty page). */
export function requireRetainedOutput(processor: ConfiguredProcessor): void {
  if (processor.output === 'none') {
    throw new HttpError('output_not_retained', `processor '${processor.id}' is configured with output = none and keeps no queryable rows`, {
      processor: processor.id,
      action: 'rebuild or source scan',
    });
  }
}
