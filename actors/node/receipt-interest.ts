/**
 * The p2p lane's receipt rule (spec, Operations summary: log processors check the verified header bloom before
 * requesting receipts): the union of what the configured processors read from receipts. A processor that reads
 * every block's receipts (blobs, or a kind without a `logInterest`) makes it null: every block's receipts are
 * fetched. Processors that read no receipts add nothing. A custom module that did not load counts as reading
 * everything (its lane fails anyway; the rule must not starve it when it is fixed and restarted).
 *
 * The union of interests {addresses A1, topics T1} ∪ {A2, T2} is widened to {A1 ∪ A2, T1 ∪ T2} (an empty set
 * meaning "any"): it may match more blocks than either alone, never fewer, so no wanted receipt is skipped.
 */
import type { LogInterest } from '../../net/p2p/log-interest.js';
import type { Hex } from '../../net/eth/hex.js';
import type { ProcessorKind } from '../kinds/sdk/kind.js';
import type { CustomKindDescription } from '../kinds/kind-catalog.js';
import { builtinKind } from '../kinds/registry.js';
import type { NodeConfig } from './config-schema.js';
import { kindOptionsOf } from './processor-config.js';

export function receiptInterestOf(config: NodeConfig, custom: ReadonlyMap<string, CustomKindDescription>): LogInterest | null {
  const addresses = new Set<Hex>();
  const topics = new Set<Hex>();
  let anyAddress = false;
  let anyTopic = false;
  for (const processor of config.processors) {
    const kind: ProcessorKind | null = processor.kind === 'custom' ? (custom.get(processor.id)?.kind ?? null) : builtinKind(processor.kind);
    if (kind === null) return null;
    if (!kind.needs.receipts) continue;
    const interest = kind.bind(kindOptionsOf(processor)).logInterest;
    if (interest === null) return null;
    if (interest.addresses.length === 0) anyAddress = true;
    if (interest.topics.length === 0) anyTopic = true;
    for (const address of interest.addresses) addresses.add(address.toLowerCase() as Hex);
    for (const topic of interest.topics) topics.add(topic.toLowerCase() as Hex);
  }
  return { addresses: anyAddress ? [] : [...addresses].sort(), topics: anyTopic ? [] : [...topics].sort() };
}
