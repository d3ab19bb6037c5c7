/**
 * Which processors are in trouble because of their lanes: a failed processor lane is `failed`; a
 * degraded or restarting one, or a source, finality or chain lane that is not serving, makes the
 * processors `degraded` (spec §2.1 coverage state). The root pushes this to every listener.
 */
import type { LaneStatus } from '../../runtime/system.js';
import type { LaneTroublesNotice } from '../listener/messages.js';
import { processorLane } from './lanes.js';

const CHAIN_LANES = ['source', 'finality', 'chain'];

export function laneTroubles(lanes: readonly LaneStatus[], processorIds: readonly string[]): LaneTroublesNotice['troubles'] {
  const byName = new Map(lanes.map((lane) => [lane.lane, lane]));
  const describe = (lane: LaneStatus) => `lane '${lane.lane}' is ${lane.state}${lane.failedReason ? `: ${lane.failedReason}` : lane.lastError ? `: ${lane.lastError}` : ''}`;
  const upstream = CHAIN_LANES.map((name) => byName.get(name)).filter((lane): lane is LaneStatus => lane !== undefined && ['degraded', 'restarting', 'failed'].includes(lane.state));
  const troubles: Record<string, { state: 'degraded' | 'failed'; reason: string }> = {};
  for (const id of processorIds) {
    const own = byName.get(processorLane(id));
    if (own?.state === 'failed') troubles[id] = { state: 'failed', reason: describe(own) };
    else if (own && (own.state === 'degraded' || own.state === 'restarting')) troubles[id] = { state: 'degraded', reason: describe(own) };
    else if (upstream.length > 0) troubles[id] = { state: 'degraded', reason: upstream.map(describe).join('; ') };
  }
  return troubles;
}
