/** The blob-fee processor (`kind = "blobs"`): the kind (default export) and its pure parts — transform, rendering, key layout, schedule, schema. */
import { blobsKind } from './kind.js';

export default blobsKind;
export * from './entries.js';
export * from './errors.js';
export * from './field-definitions.js';
export * from './keys.js';
export { orderedBlock, orderedScheduleRow, orderedTransaction, renderBlock, renderChangePayload, renderScheduleRow, renderTransaction } from './render.js';
export * from './schedule.js';
export * from './schema.js';
export { TRANSFORM_VERSION, transformBlock, type TransformBlockInput, type TransformedBlock } from './transform.js';
export * from './types.js';
export * from './with-finality.js';
