/** The blobs kind's query extension name; targets and retained output come from the generic mounting (api/aggregate/query-extensions.ts). */
export { retainedOutput, type RetainedOutput } from '../../../../api/aggregate/query-extensions.js';
export type { QueryTarget as BlobQueryTarget, TargetResolver } from '../../../../api/aggregate/kind-surface.js';

export const BLOBS_EXTENSION = 'blobs';
