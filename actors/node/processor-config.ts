/**
 * One `[[processors]]` entry of the configuration, its schema derived from the kind registry: the kind names
 * (the built-in ones and `custom`), each built-in kind's option keys (sdk/options-schema.ts) beside the common
 * keys, and the checks that tie keys to kinds. The code names no kind: a new built-in kind brings its own keys.
 */
import { z } from 'zod';
import type { KindOptions } from '../kinds/sdk/kind.js';
import { BUILTIN_KINDS, BUILTIN_OPTION_KEYS } from '../kinds/registry.js';

/** The kind of a processor whose code is a user's module (`module`). */
const CUSTOM = 'custom';

const commonKeys = {
  /** Name in URLs (`/v1/processors/{id}`). */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/, 'expected a URL-safe name of 1-64 characters'),
  /** A built-in kind (actors/kinds/registry.ts), or `custom` with `module`. */
  kind: z.enum([...BUILTIN_KINDS.keys(), CUSTOM]),
  /** kind = "custom": the kind's module (.js/.mjs, or .ts/.mts compiled at load), relative to the config file. */
  module: z.string().min(1).optional(),
  /** kind = "custom": options handed to the kind's own `options` parser. */
  options: z.record(z.string(), z.unknown()).optional(),
  /** Immutable instance identity; a semantic change gets a new instance. Defaults to the id. */
  instance: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._~@:+-]{0,127}$/, 'expected an instance id of 1-128 URL-safe characters').optional(),
  /** First block to process; omitted: the first block the chain lane applies. */
  start_block: z.number().int().min(0).optional(),
  history_mode: z.enum(['live_only', 'on_demand']).default('live_only'),
  history_control: z.enum(['node_owned', 'application_subscriptions']).default('node_owned'),
  /** `entities` keeps queryable output; `none` keeps none (queries answer output_not_retained). */
  output: z.enum(['entities', 'none']).default('entities'),
  /** The change feed (changes, stream, consumers); false answers delivery_disabled. */
  delivery: z.boolean().default(true),
  /** Change-log window: the newest this many changes are kept (older ones pruned unless an active required lease needs them); 0 keeps every change. */
  retain_changes: z.number().int().min(0).default(1_000_000),
  /** Ordered-state kinds (erc20, amm, custom ordered_state): an automatic recovery checkpoint each time finality crosses a multiple of this many blocks; 0: none. */
  checkpoint_every_blocks: z.number().int().min(0).default(1000),
  /** How many automatic checkpoints to keep (the newest). */
  checkpoints_retained: z.number().int().min(1).max(1000).default(3),
  /** Ordered-state kinds: a savepoint archive (GET …/savepoints/{id}), relative to the config file, that seeds this instance when it has no state yet. */
  seed_savepoint: z.string().min(1).optional(),
};

/** Each built-in kind's own keys (erc20 `tokens`, amm `pools`: see the kind's options.ts), optional here; the checks below require a kind's own. */
const optionKeys: Record<string, z.ZodOptional<z.ZodType>> = Object.fromEntries([...BUILTIN_OPTION_KEYS].map(([key, { kind, option }]) => {
  if (Object.hasOwn(commonKeys, key) || key === 'artifacts') throw new Error(`built-in kind '${kind}' declares the option '${key}', a key every [[processors]] entry has`);
  return [key, option.schema.optional()];
}));

/** `[processors.artifacts]`: the block's finalized, checksummed `map` output kept apart from entities and delivery (spec §2.9). */
const artifacts = z.strictObject({
  /** none: no artifacts; window: the newest `window_blocks` finalized blocks (older ones stay while another owner claims them); full: every finalized block. */
  retention: z.enum(['none', 'window', 'full']).default('none'),
  window_blocks: z.number().int().positive().max(1_000_000_000).default(10_000),
  /** This instance takes its blocks only from the artifacts of the processor with this id (POST …/artifacts/replay): it follows no chain journal. */
  replay_from: z.string().min(1).optional(),
}).prefault({});

const entry = z.strictObject({ ...commonKeys, ...optionKeys, artifacts });

/** An entry as parsed: the common keys, and the built-in kinds' own keys by name (typed where their kind reads them). */
export type ProcessorEntry = z.infer<typeof entry> & { readonly [option: string]: unknown };

export const processorConfig: z.ZodType<ProcessorEntry> = entry.superRefine((parsed, ctx) => {
  const processor: ProcessorEntry = parsed;
  const issue = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
  const builtin = BUILTIN_KINDS.get(processor.kind);
  if (!builtin && processor.module === undefined) issue('module', 'expected the path of the kind\'s module for kind = "custom" (e.g. module = "./my-kind.ts")');
  if (builtin && processor.module !== undefined) issue('module', `expected no module for the built-in kind "${processor.kind}" (use kind = "custom")`);
  if (builtin && processor.options !== undefined) issue('options', `expected no options table for the built-in kind "${processor.kind}" (its keys are top-level)`);
  for (const [key, { kind, option }] of BUILTIN_OPTION_KEYS) {
    const given = processor[key] !== undefined;
    if (kind === processor.kind && !given && option.required !== undefined) issue(key, `expected ${option.required} for kind = "${kind}"`);
    if (kind !== processor.kind && given) issue(key, `expected no ${key} for kind = "${processor.kind}" (only ${kind} processors take ${key})`);
  }
  if (processor.seed_savepoint !== undefined && builtin?.ordering === 'block_local') issue('seed_savepoint', `expected no seed_savepoint for the block-local kind "${processor.kind}" (savepoints hold ordered-state private state)`);
  if (processor.seed_savepoint !== undefined && processor.start_block !== undefined) issue('start_block', 'expected no start_block with seed_savepoint (a seeded instance starts after its savepoint\'s block)');
});

/** The kind-specific keys of an entry, handed to its kind's `bind` (which validates them): a custom kind's `options` table, or a built-in kind's own keys. */
export function kindOptionsOf(processor: ProcessorEntry): KindOptions {
  if (!BUILTIN_KINDS.has(processor.kind)) return processor.options ?? {};
  return Object.fromEntries([...BUILTIN_OPTION_KEYS].filter(([key, { kind }]) => kind === processor.kind && processor[key] !== undefined).map(([key]) => [key, processor[key]]));
}

/** The kind's own options of an entry, as text, for comparing two instances' map contracts. */
export function kindOptionsText(processor: ProcessorEntry): string {
  const builtinKeys = Object.fromEntries([...BUILTIN_OPTION_KEYS.keys()].map((key) => [key, processor[key] ?? null]));
  return JSON.stringify({ options: processor.options ?? null, ...builtinKeys, module: processor.module ?? null });
}
