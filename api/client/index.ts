/** A small client for applications of this node: a safe request helper and a conforming change follower. */
export * from './request.js';
export * from './follow.js';
export * from './sse-parser.js';
export * from './consumer.js';
