/**
 * Which history source a materialization job, backfill subscription, rebuild or probe starts with: the one the request
 * names, else the lane's default (the first source the node uses). A `[[sources.history]]` entry the node skipped
 * (actors/node/history-sources.ts) is answered with the reason it was skipped, never as if it did not exist.
 */
import { CodedError } from '../../runtime/errors.js';

/** A `[[sources.history]]` entry the node does not use, and why (logged once at start-up). */
export interface SkippedHistorySource {
  readonly id: string;
  readonly reason: string;
}

export interface SourceChoice {
  readonly sources: ReadonlyMap<string, unknown>;
  readonly defaultSource: string | undefined;
  readonly skippedSources: readonly SkippedHistorySource[];
}

/**
 * The id of the source a request uses. Throws unsupported_capability (422) when there is none (`needs` says what
 * needs one, `details` go with it) or the named one is skipped, and not_found (404) when the named one is unknown.
 */
export function chosenSource(lane: SourceChoice, requested: string | undefined, needs: string, details?: Record<string, unknown>): string {
  const source = requested ?? lane.defaultSource;
  if (source === undefined) throw new CodedError('unsupported_capability', `${noSourceText(lane.skippedSources)}; ${needs}`, details);
  if (!lane.sources.has(source)) throw missingSourceError(source, lane.skippedSources);
  return source;
}

/** The error for source `id`, which the lane does not have: skipped (422, with the reason) or unknown (404). */
export function missingSourceError(id: string, skipped: readonly SkippedHistorySource[]): CodedError {
  const entry = skipped.find((s) => s.id === id);
  if (entry) return new CodedError('unsupported_capability', `history source '${entry.id}' is skipped: ${entry.reason}`, { source: entry.id, rule: 'history_source_skipped' });
  return new CodedError('not_found', `no history source '${id.slice(0, 80)}'`, { source: id.slice(0, 80) });
}

/** Why the lane has no default source: none is configured, or every configured one is skipped. */
function noSourceText(skipped: readonly SkippedHistorySource[]): string {
  if (skipped.length === 0) return 'no history source is configured ([[sources.history]])';
  return `no history source is usable (${skipped.map((s) => `'${s.id}' is skipped: ${s.reason}`).join('; ')})`;
}

