/** The SDK's query surface: what a kind's typed query extension is written against (spec §4.4). */
export type { QueryEndpoint, QueryExtension, QueryReply } from './query-extension.js';
export type { BlockInterval, QueriedProcessor, QueryRequest, RetainedOutput } from './query-request.js';
export type { PageTokenRecord, PageTokens, PathParams, QueryParams } from './query-params.js';
export { instanceOptions } from './instance-options.js';
