/**
 * Which `[[sources.history]]` entries the node uses. A "devnet" source serves the embedded devnet's chain, which
 * exists only with sources.live.kind = "devnet": with any other live source (config.example.toml with the README's
 * "follow a real node" settings) it is skipped — logged once at start, and every request naming it answers why —
 * rather than stopping the node. The remaining entries keep their order: the first is the default source.
 */
import type { SkippedHistorySource } from '../history/source-choice.js';

interface HistorySourcesOf<S extends { readonly id: string; readonly kind: string }> {
  readonly sources: { readonly live: { readonly kind: string }; readonly history: readonly S[] };
}

/** Why the node does not use `source`, or null when it does. */
function skipReason(config: HistorySourcesOf<{ id: string; kind: string }>, source: { readonly kind: string }): string | null {
  if (source.kind !== 'devnet' || config.sources.live.kind === 'devnet') return null;
  return `kind "devnet" serves the embedded devnet's chain, and sources.live.kind is "${config.sources.live.kind}"`;
}

export function skippedHistorySources(config: HistorySourcesOf<{ id: string; kind: string }>): SkippedHistorySource[] {
  return config.sources.history.flatMap((source) => {
    const reason = skipReason(config, source);
    return reason === null ? [] : [{ id: source.id, reason }];
  });
}

export function usableHistorySources<S extends { readonly id: string; readonly kind: string }>(config: HistorySourcesOf<S>): S[] {
  return config.sources.history.filter((source) => skipReason(config, source) === null);
}
