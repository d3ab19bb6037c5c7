/**
 * `defineProcessorKind`: the one way a kind is declared, built-in or user-written. Two orderings:
 *
 * - `block_local`: the kind writes a block's rows itself (`apply`), removes them on `undo` and marks
 *   them on `finalize`; a block's output depends on that block alone.
 * - `ordered_state`: `map(block)` is pure and yields the block's deltas; `reduce` folds them, in chain
 *   order, into the instance's state through the StateApi, which records the inverse of every write so
 *   `undo` restores the state exactly (never by re-running a reorged block); `changeOf` renders the
 *   change a restored key publishes; `finalized` re-marks keys whose last change became final.
 *
 * A change is either rendered JSON (`dataJson`) or raw bytes (`value`): raw bytes go through the
 * kind's `render` when it has one (typed JSON), else publish as `{encoding: "hex", value: "0x…"}`
 * labelled by the change schema (spec §2.3).
 *
 * The identity is checked at definition: a semantic `version`, an `sdk` range this SDK satisfies.
 */
import type { Hex } from '../../../net/eth/hex.js';
import type { Finality } from '../../../store/coverage.js';
import type { CollectionDescription } from '../../../store/collection.js';
import type { QueryExtension } from './query/index.js';
import type { ArtifactBlock, BlockInput, BoundKind, KindArtifacts, KindChange, KindContext, KindNeeds, KindOptions, ProcessorKind } from './kind.js';
import type { LogInterest } from '../../../net/p2p/log-interest.js';
import type { OptionsSchema } from './options-schema.js';
import { parseVersion, satisfies, SDK_VERSION } from './sdk-range.js';
import { StateBatch, type StateApi } from './state.js';

/** A change as a kind returns it: rendered JSON, or raw bytes the SDK renders (see `render`). */
export type KindOutput = KindChange | RawChange;

/** A change published from its raw bytes: through the kind's `render`, or as `{encoding: "hex", value}`. */
export interface RawChange {
  readonly kind: string;
  readonly key: string | null;
  readonly value: Uint8Array;
}

interface KindIdentity<O> {
  readonly name: string;
  readonly version: string;
  readonly sdk: string;
  readonly needs: KindNeeds;
  readonly changeSchema: string;
  readonly deliveryOrdering?: string;
  readonly schema?: unknown;
  readonly collections?: readonly CollectionDescription[];
  readonly queryExtensions?: readonly QueryExtension[];
  /** The change kind of `finalized` envelopes. */
  readonly finalizedKind: string;
  /** Validates the instance's options; throw an Error naming the key and what was expected. */
  readonly options?: (raw: KindOptions) => O;
  /** A built-in kind: its top-level `[[processors]]` keys with their config schemas (options-schema.ts). */
  readonly optionsSchema?: OptionsSchema;
  /** The public renderer of raw changes (typed JSON); without one they publish as `{encoding: "hex", value}`. */
  readonly render?: (change: RawChange) => unknown;
  /**
   * For a kind that reads only some logs from receipts: the contract addresses and topics it reads for these
   * options (BoundKind.logInterest). Blocks whose bloom matches neither reach it without receipts when a source
   * skipped them. With an interest, each receipt's `logs` holds only the logs it matches (type, status, gas and
   * bloom are whole), so a kind must not read a log's position in that list as its index in the block.
   * Absent or null: it needs every block's receipts, with every log.
   */
  readonly logInterest?: (options: O) => LogInterest | null;
  /** Label of the `map` output's shape (artifacts, spec §2.9); default `<name>.deltas@<version>`. */
  readonly deltaSchema?: string;
}

/**
 * A block-local kind writes a block's rows with `apply`, or — to keep artifacts (spec §2.9) — declares the split
 * instead: `map` (pure: the block's deltas) and `applyMapped` (writes the rows of those deltas); then `apply` is
 * `applyMapped(map(block))` and replaying retained deltas writes what processing the block wrote.
 */
/** What a block-local `map` may read beside the block: the served chain. */
export type MapChain = Pick<KindContext, 'network' | 'schedule' | 'genesis' | 'scheduleSource'>;

export interface BlockLocalDefinition<O, D = unknown> extends KindIdentity<O> {
  readonly ordering: 'block_local';
  apply?(ctx: KindContext, block: BlockInput, finality: Finality, options: O): KindOutput[];
  /** Pure: reads the block and the chain (`network`, `schedule`, `genesis` of the context) only, never the tables. */
  map?(block: BlockInput, options: O, chain: MapChain): D;
  applyMapped?(ctx: KindContext, deltas: D, block: ArtifactBlock, finality: Finality, options: O): KindOutput[];
  undo(ctx: KindContext, number: number, hash: Hex, options: O): KindOutput[];
  finalize(ctx: KindContext, from: number, to: number, options: O): void;
}

/** The block a reduce step applies. */
export interface ReduceBlock {
  readonly number: number;
  readonly hash: Hex;
  readonly timestamp: number;
  readonly finality: Finality;
}

export interface OrderedStateDefinition<O, D> extends KindIdentity<O> {
  readonly ordering: 'ordered_state';
  /** Pure: the block's deltas (no state, no clock). */
  map(block: BlockInput, options: O): D;
  /** Ordered: folds the deltas into the state and returns the changes to publish. */
  reduce(state: StateApi, deltas: D, block: ReduceBlock, options: O): KindOutput[];
  /**
   * The change a key restored by undo publishes (its restored value — after `finalized` re-marked it — or
   * undefined when it is gone); `finalizedThrough` is the instance's finalized block (for a kind that derives
   * finality where it serves a row instead of re-marking it).
   */
  changeOf(key: Buffer, value: Buffer | undefined, finalizedThrough: number | null): KindOutput;
  /**
   * A stored value once blocks through `through` are final: the kind may re-mark it (e.g. `finality`);
   * null leaves it as is. Applied to the rows a finality move touches, and to values an undo restores
   * or a checkpoint copies from recorded inverses, so neither brings back a stale mark.
   */
  finalizedValue?(value: Buffer, through: number): Buffer | null;
}

export type ProcessorKindDefinition<O, D> = BlockLocalDefinition<O, D> | OrderedStateDefinition<O, D>;

export class KindDefinitionError extends Error {
  override readonly name = 'KindDefinitionError';
}

const REQUIRED_FUNCTIONS = { block_local: ['undo', 'finalize'], ordered_state: ['map', 'reduce', 'changeOf'] } as const;

/** A definition may come from a user's module: check its shape before trusting it. */
function checkShape(definition: ProcessorKindDefinition<unknown, unknown>): void {
  const name = typeof definition.name === 'string' ? definition.name : '(unnamed)';
  const ordering: unknown = definition.ordering;
  if (ordering !== 'block_local' && ordering !== 'ordered_state') throw new KindDefinitionError(`kind '${name}': ordering must be 'block_local' or 'ordered_state'`);
  if (definition.render !== undefined && typeof definition.render !== 'function') throw new KindDefinitionError(`kind '${name}': render must be a function`);
  if (definition.logInterest !== undefined && typeof definition.logInterest !== 'function') throw new KindDefinitionError(`kind '${name}': logInterest must be a function of the options`);
  for (const field of ['name', 'version', 'sdk', 'changeSchema', 'finalizedKind'] as const) {
    if (typeof definition[field] !== 'string') throw new KindDefinitionError(`kind '${name}': '${field}' must be a string`);
  }
  const needs: unknown = definition.needs;
  if (typeof needs !== 'object' || needs === null || typeof (needs as KindNeeds).bodies !== 'boolean' || typeof (needs as KindNeeds).receipts !== 'boolean') {
    throw new KindDefinitionError(`kind '${name}': needs must be {bodies: boolean, receipts: boolean}`);
  }
  const fns = definition as unknown as Record<string, unknown>;
  for (const fn of REQUIRED_FUNCTIONS[ordering]) {
    if (typeof fns[fn] !== 'function') throw new KindDefinitionError(`kind '${name}': an ${ordering} kind needs a '${fn}' function`);
  }
  if (ordering === 'block_local') {
    const split = typeof fns.map === 'function' && typeof fns.applyMapped === 'function';
    if ((fns.map !== undefined || fns.applyMapped !== undefined) && !split) throw new KindDefinitionError(`kind '${name}': a block_local kind declares 'map' and 'applyMapped' together`);
    if (typeof fns.apply !== 'function' && !split) throw new KindDefinitionError(`kind '${name}': a block_local kind needs an 'apply' function (or 'map' with 'applyMapped')`);
  }
  if (definition.deltaSchema !== undefined && typeof definition.deltaSchema !== 'string') throw new KindDefinitionError(`kind '${name}': deltaSchema must be a string`);
  if (definition.optionsSchema !== undefined && (typeof definition.optionsSchema !== 'object' || definition.optionsSchema === null)) throw new KindDefinitionError(`kind '${name}': optionsSchema must be an object of option keys`);
}

function checkIdentity(definition: Pick<KindIdentity<unknown>, 'name' | 'version' | 'sdk'>): void {
  if (!/^[a-z][a-z0-9_-]{0,63}$/.test(definition.name)) throw new KindDefinitionError(`kind name '${definition.name}' must be 1-64 characters a-z 0-9 _ - starting with a letter`);
  if (!parseVersion(definition.version)) throw new KindDefinitionError(`kind '${definition.name}': version '${definition.version}' is not a semantic version x.y.z`);
  let ok: boolean;
  try {
    ok = satisfies(SDK_VERSION, definition.sdk);
  } catch (error) {
    throw new KindDefinitionError(`kind '${definition.name}': ${(error as Error).message}`);
  }
  if (!ok) throw new KindDefinitionError(`kind '${definition.name}' was written for SDK ${definition.sdk}; this node's processor SDK is ${SDK_VERSION}`);
}

/** Rendered changes: raw ones through the kind's `render`, else as `{encoding: "hex", value}` (spec §2.3). */
export function renderChanges(outputs: readonly KindOutput[], render: ((change: RawChange) => unknown) | undefined): KindChange[] {
  // Built-in kinds return rendered changes only: pass the array through untouched.
  if (outputs.every((output) => 'dataJson' in output)) return outputs as KindChange[];
  return outputs.map((output) => {
    if ('dataJson' in output) return output;
    const data = render ? render(output) : { encoding: 'hex', value: `0x${Buffer.from(output.value.buffer, output.value.byteOffset, output.value.byteLength).toString('hex')}` };
    return { kind: output.kind, key: output.key, dataJson: JSON.stringify(data) };
  });
}

/** A bound kind whose changes may still be raw (`bind` renders them). */
type UnrenderedKind = Omit<BoundKind, 'apply' | 'undo' | 'logInterest' | 'artifacts'> & {
  apply(...args: Parameters<BoundKind['apply']>): KindOutput[];
  undo(...args: Parameters<BoundKind['undo']>): KindOutput[];
  artifacts?: Omit<KindArtifacts, 'applyMapped'> & { applyMapped(...args: Parameters<KindArtifacts['applyMapped']>): KindOutput[] };
};

/** The bound kind with every change rendered (raw ones through `render`, or as hex). */
function rendered(bound: UnrenderedKind, render: ((change: RawChange) => unknown) | undefined): Omit<BoundKind, 'logInterest'> {
  const { artifacts, ...rest } = bound;
  return {
    ...rest,
    apply: (ctx, block, finality) => renderChanges(bound.apply(ctx, block, finality), render),
    undo: (ctx, number, hash, finalizedThrough) => renderChanges(bound.undo(ctx, number, hash, finalizedThrough), render),
    ...(artifacts ? { artifacts: { ...artifacts, applyMapped: (ctx, deltas, block, finality) => renderChanges(artifacts.applyMapped(ctx, deltas, block, finality), render) } satisfies KindArtifacts } : {}),
  };
}

/** `step` through the lane commit's batch, or — a kind applied outside one — through a batch of its own, written out after it. */
function withBatch<T>(ctx: KindContext, step: (batch: StateBatch) => T): T {
  if (ctx.stateBatch) return step(ctx.stateBatch);
  const batch = new StateBatch(ctx.tables.entities, ctx.tables.undo);
  const result = step(batch);
  batch.flush();
  return result;
}

function bindOrdered<O, D>(definition: OrderedStateDefinition<O, D>, options: O, deltaSchema: string): UnrenderedKind {
  const remark = definition.finalizedValue;
  /** The value re-marked for blocks final through `through` (as is when the kind has no remark or it is unchanged). */
  const marked = (value: Buffer, through: number | null): Buffer => (remark && through !== null ? remark(value, through) ?? value : value);
  const applyMapped = (ctx: KindContext, deltas: D, block: ArtifactBlock, finality: Finality): KindOutput[] => {
    const record = finality !== 'finalized';
    return withBatch(ctx, (batch) => definition.reduce(batch.recording(block.number, record), deltas, { number: block.number, hash: block.hash, timestamp: block.timestamp, finality }, options));
  };
  return {
    finalizedKind: definition.finalizedKind,
    ...(remark ? { finalizedValue: (value: Buffer, through: number) => remark(value, through) } : {}),
    apply: (ctx, block, finality) => applyMapped(ctx, definition.map(block, options), artifactBlock(block), finality),
    artifacts: { deltaSchema, map: (_ctx, block) => definition.map(block, options), applyMapped: (ctx, deltas, block, finality) => applyMapped(ctx, deltas as D, block, finality) },
    undo(ctx, number, _hash, finalizedThrough) {
      // An inverse was recorded before later finality: the restored value gets the marks it has missed since.
      const restore = (value: Buffer) => marked(value, finalizedThrough);
      const restored = withBatch(ctx, (batch) => batch.undoBlock(number, restore));
      return restored.map((inverse) => definition.changeOf(inverse.key, inverse.previous, finalizedThrough));
    },
    finalize(ctx, _from, to) {
      withBatch(ctx, (batch) => batch.finalize(to, remark));
    },
  };
}

/** The block fields applying deltas needs. */
function artifactBlock(block: BlockInput): ArtifactBlock {
  return { number: block.number, hash: block.hash, parentHash: block.header.parentHash, timestamp: block.header.timestamp };
}

function bindBlockLocal<O, D>(definition: BlockLocalDefinition<O, D>, options: O, deltaSchema: string): UnrenderedKind {
  const { map, applyMapped } = definition;
  if (map && applyMapped) {
    return {
      finalizedKind: definition.finalizedKind,
      apply: (ctx, block, finality) => applyMapped(ctx, map(block, options, ctx), artifactBlock(block), finality, options),
      artifacts: { deltaSchema, map: (ctx, block) => map(block, options, ctx), applyMapped: (ctx, deltas, block, finality) => applyMapped(ctx, deltas as D, block, finality, options) },
      undo: (ctx, number, hash) => definition.undo(ctx, number, hash, options),
      finalize: (ctx, from, to) => definition.finalize(ctx, from, to, options),
    };
  }
  return {
    finalizedKind: definition.finalizedKind,
    apply: (ctx, block, finality) => definition.apply!(ctx, block, finality, options),
    undo: (ctx, number, hash) => definition.undo(ctx, number, hash, options),
    finalize: (ctx, from, to) => definition.finalize(ctx, from, to, options),
  };
}

export function defineProcessorKind<O = KindOptions, D = unknown>(definition: ProcessorKindDefinition<O, D>): ProcessorKind {
  checkShape(definition as ProcessorKindDefinition<unknown, unknown>);
  checkIdentity(definition);
  const parseOptions = (raw: KindOptions): O => {
    if (definition.options) return definition.options(raw);
    const unexpected = Object.keys(raw);
    if (unexpected.length > 0) throw new KindDefinitionError(`kind '${definition.name}' takes no options, got '${unexpected[0]}'`);
    // A kind without an options parser binds the (empty) options object itself.
    return raw as unknown as O;
  };
  const deltaSchema = definition.deltaSchema ?? `${definition.name}.deltas@${definition.version}`;
  const hasSplit = definition.ordering === 'ordered_state' || (definition.map !== undefined && definition.applyMapped !== undefined);
  return {
    name: definition.name,
    version: definition.version,
    sdk: definition.sdk,
    ordering: definition.ordering,
    needs: definition.needs,
    changeSchema: definition.changeSchema,
    deliveryOrdering: definition.deliveryOrdering ?? 'block_versioned_idempotent',
    deltaSchema: hasSplit ? deltaSchema : null,
    schema: definition.schema ?? {},
    collections: definition.collections ?? [],
    queryExtensions: definition.queryExtensions ?? [],
    optionsSchema: definition.optionsSchema ?? {},
    bind(raw) {
      const options = parseOptions(raw);
      const bound = rendered(definition.ordering === 'ordered_state' ? bindOrdered(definition, options, deltaSchema) : bindBlockLocal(definition, options, deltaSchema), definition.render);
      return { ...bound, logInterest: definition.needs.receipts ? definition.logInterest?.(options) ?? null : null };
    },
  };
}
