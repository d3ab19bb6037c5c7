/**
 * The processor SDK (`import { defineProcessorKind } from 'chain-data-node/sdk'`): what a kind is
 * written against, built-in or user-written.
 */
export { defineProcessorKind, KindDefinitionError, type BlockLocalDefinition, type MapChain, type KindOutput, type OrderedStateDefinition, type ProcessorKindDefinition, type RawChange, type ReduceBlock } from './define.js';
export { typedState, type StateApi, type TypedState, type ValueCodec } from './state.js';
export { SDK_VERSION, satisfies } from './sdk-range.js';
export { parsedOption, type OptionKey, type OptionsSchema, type ParsedOption } from './options-schema.js';
export type { ArtifactBlock, BlockInput, BoundKind, KindArtifacts, KindChange, KindContext, KindNeeds, KindOptions, KindOrdering, ProcessorKind } from './kind.js';
export type { BlobOnlyTransaction, EncodedBlobTransaction } from './blob-transactions-only.js';
export * from './tables.js';
export * from './chain.js';
export * from './errors.js';
export * from './query/index.js';
