/**
 * A kind's options as its query routes read them: parsed once per configured instance (options are fixed for
 * the node's life), then looked up per request.
 */
import type { QueriedProcessor } from './query-request.js';

export function instanceOptions<T>(parse: (raw: Readonly<Record<string, unknown>>) => T): (processor: QueriedProcessor) => T {
  const parsed = new WeakMap<QueriedProcessor, T>();
  return (processor) => {
    let options = parsed.get(processor);
    if (options === undefined) {
      options = parse(processor.options ?? {});
      parsed.set(processor, options);
    }
    return options;
  };
}
