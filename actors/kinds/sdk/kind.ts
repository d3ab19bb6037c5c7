/**
 * The kind interface (processor SDK): what a processor kind provides to the processor lane, declared once
 * here and implemented by `defineProcessorKind` (define.ts). The lane owns the journal position, change
 * sequences, cursors, envelopes, coverage and the transaction; a kind only turns one block into entity rows
 * and change payloads (deterministically: no clocks, no randomness).
 */
import type { LogInterest } from '../../../net/p2p/log-interest.js';
import type { Hex } from '../../../net/eth/hex.js';
import type { Finality } from '../../../store/chain-types.js';
import type { CollectionDescription } from '../../../store/collection.js';
import type { QueryExtension } from './query/index.js';
import type { ArtifactBlock, BlockInput } from './kind-block.js';
import type { KindContext } from './kind-context.js';
import type { OptionsSchema } from './options-schema.js';

export type { ArtifactBlock, BlockInput } from './kind-block.js';
export type { ChainContextArgs, KindContext } from './kind-context.js';

/** One change a kind publishes: its kind label, entity key and the payload JSON, rendered once. */
export interface KindChange {
  readonly kind: string;
  readonly key: string | null;
  readonly dataJson: string;
}

export type KindOrdering = 'block_local' | 'ordered_state';

/** What material a kind reads; the lane fetches and decodes only that. */
export interface KindNeeds {
  /** The block body's transactions (else `transactions` is empty). */
  readonly bodies: boolean;
  /** The block's receipts (else `receipts` is null). */
  readonly receipts: boolean;
  /**
   * Less than all of it, when the kind reads only part (the lane then decodes only that part: actors/processor/block-input.ts, blob-transactions-only.ts):
   * `blobTransactionsOnly` — transactions other than blob (type 3) ones come as `{ type }` alone, undecoded;
   * `receiptGasOnly` — each receipt carries only `cumulativeGasUsed`, its logs not decoded.
   */
  readonly partial?: { readonly blobTransactionsOnly?: boolean; readonly receiptGasOnly?: boolean };
}

/** A kind's own `[[processors]]` options (e.g. erc20 `tokens`), as the config gives them. */
export type KindOptions = Readonly<Record<string, unknown>>;

/**
 * A kind's map/apply split (spec §2.9 artifacts): `map` is pure (the block's deltas, serialized canonically by
 * actors/kinds/sdk/delta-codec.ts), `applyMapped` folds deltas into the instance exactly as `apply` does a
 * block (`apply` is `applyMapped(map(block))`), so replaying retained deltas equals processing the blocks.
 */
export interface KindArtifacts {
  /** Label of the delta shape (part of the map identity an export digest covers). */
  readonly deltaSchema: string;
  /** Pure: the block's deltas (the context gives the chain's schedule and network, never rows to read). */
  map(ctx: KindContext, block: BlockInput): unknown;
  applyMapped(ctx: KindContext, deltas: unknown, block: ArtifactBlock, finality: Finality): KindChange[];
}

/** A kind with its instance's options applied: what the lane calls inside its write transaction. */
export interface BoundKind {
  /** The map/apply split, when the kind has one (ordered-state kinds always; block-local kinds that declare `map`); absent: no artifacts. */
  readonly artifacts?: KindArtifacts;
  /** The change kind of `finalized` envelopes. */
  readonly finalizedKind: string;
  /** Writes the rows of an applied block (inside the lane's write transaction) and returns its changes. */
  apply(ctx: KindContext, block: BlockInput, finality: Finality): KindChange[];
  /** Restores the state before an undone block and returns the undo changes (none when the block wrote nothing); `finalizedThrough` is the instance's finalized block. */
  undo(ctx: KindContext, number: number, hash: Hex, finalizedThrough: number | null): KindChange[];
  /** Ordered-state kinds: a stored value re-marked for blocks final through `through` (null: unchanged). */
  readonly finalizedValue?: (value: Buffer, through: number) => Buffer | null;
  /** Marks the rows of blocks `from`..`to` (inclusive) finalized; drops undo data they no longer need. */
  finalize(ctx: KindContext, from: number, to: number): void;
  /**
   * The logs this instance reads from receipts: a block whose header bloom matches none of them holds nothing it
   * reads, so a source may skip that block's receipts (the p2p lane's bloom check) and the kind gets it with no
   * receipts; its receipts carry only the logs the interest matches (`receiptsOfInterest`). Null: it reads every
   * block's receipts, with every log (or none).
   */
  readonly logInterest: LogInterest | null;
}

/**
 * One processor kind, as `defineProcessorKind` declares it (actors/kinds/sdk): identity, ordering,
 * material needs, collections and query extensions, and `bind`, which validates an instance's options
 * and returns the functions the lane calls.
 */
export interface ProcessorKind {
  /** The TOML `kind`. */
  readonly name: string;
  /** Semantic version of its output; a change of output semantics is a new version (and a new instance). */
  readonly version: string;
  /** The SDK range it was written for (checked at load against SDK_VERSION). */
  readonly sdk: string;
  readonly ordering: KindOrdering;
  readonly needs: KindNeeds;
  readonly changeSchema: string;
  readonly deliveryOrdering: string;
  /** The delta shape label of its artifacts, or null when the kind has no map/apply split (it keeps no artifacts). */
  readonly deltaSchema: string | null;
  /** The schema document (GET /v1/processors/{p}/schema). */
  readonly schema: unknown;
  /** The collections its entity table serves through the generic entity API. */
  readonly collections: readonly CollectionDescription[];
  readonly queryExtensions: readonly QueryExtension[];
  /** A built-in kind's top-level `[[processors]]` keys, with their config schemas (options-schema.ts); empty for a user's kind, whose options are the entry's `options` table. */
  readonly optionsSchema: OptionsSchema;
  /** Validates the instance's options (throws a message naming the key) and binds them. */
  bind(options: KindOptions): BoundKind;
}
