/**
 * Lane trouble as last reported by the node's root: a processor whose lane (or the chain lanes it
 * depends on) is failing reports coverage state `degraded` or `failed` (spec §2.1), whatever its
 * stored progress says. Kept per listener worker; the root pushes every change.
 */
import type { CoverageState } from '../../store/coverage.js';

export interface LaneTrouble {
  readonly state: 'degraded' | 'failed';
  readonly reason: string;
}

const troubles = new Map<string, LaneTrouble>();

/** Replaces the whole picture: processor id → trouble (processors absent are healthy). */
export function setLaneTroubles(next: Readonly<Record<string, LaneTrouble>>): void {
  troubles.clear();
  for (const [id, trouble] of Object.entries(next)) troubles.set(id, trouble);
}

/** The processor's lane trouble (its own lane, or a chain lane it depends on), or undefined when it has none. */
export function laneTroubleOf(processorId: string): LaneTrouble | undefined {
  return troubles.get(processorId);
}

export function coverageStateOf(processorId: string, stored: CoverageState): CoverageState {
  return troubles.get(processorId)?.state ?? stored;
}
