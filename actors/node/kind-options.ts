/** The kind-specific keys of one `[[processors]]` entry, handed to its kind's `bind` (which validates them). */
import type { KindOptions } from '../kinds/sdk/kind.js';
import type { ProcessorConfig } from './config-schema.js';

export function kindOptionsOf(processor: ProcessorConfig): KindOptions {
  if (processor.kind === 'custom') return processor.options ?? {};
  return {
    ...(processor.tokens === undefined ? {} : { tokens: processor.tokens }),
    ...(processor.pools === undefined ? {} : { pools: processor.pools }),
  };
}
