/**
 * The processor instances this node is configured with, as the listener sees them (the root fills
 * them from `[[processors]]`), and lookups that answer 404 `not_found` for an unknown id.
 */
import { HttpError } from '../errors.js';
import type { ProcessorKindInfo } from './kind-surface.js';

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

/** The connection- and listing-level identity of a processor (status, capabilities, SSE hello). */
export interface ProcessorDescriptor {
  readonly id: string;
  readonly instance: string;
  readonly kind: string;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
  readonly output: 'entities' | 'none';
  readonly delivery: boolean;
}

export interface ProcessorRegistry {
  readonly all: readonly ConfiguredProcessor[];
  /** The processor with this id; 404 `not_found` otherwise. */
  byId(id: string): ConfiguredProcessor;
  find(id: string): ConfiguredProcessor | undefined;
  /** The processors whose kind installs the query extension `name`. */
  claimants(name: string): ConfiguredProcessor[];
}

export function createProcessorRegistry(processors: readonly ConfiguredProcessor[]): ProcessorRegistry {
  const byId = new Map(processors.map((p) => [p.id, p]));
  return {
    all: processors,
    byId(id) {
      const processor = byId.get(id);
      if (!processor) throw new HttpError('not_found', `no processor '${id}' is configured on this node`, { processor: id });
      return processor;
    },
    find: (id) => byId.get(id),
    claimants: (name) => processors.filter((p) => kindInfo(p).queryExtensions.includes(name)),
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
