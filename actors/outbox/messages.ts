/** The messages this lane accepts: the consumer commands of store/consumer-commands.ts (shared with the API, which sends them). */
export type * from '../../store/consumer-commands.js';
