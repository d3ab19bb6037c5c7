import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../runtime/log.js';
import { ActorSystem } from '../../runtime/system.js';
import { child, lane, waitFor } from './helpers.js';

test('the start watchdog names exactly the workers that had not reported ready when it fired', async (t) => {
  const system = new ActorSystem({ log: createLogger({ lane: 'node', level: 'silent', maxLinesPerSecond: 100 }), logLevel: 'silent', logRate: 100, startTimeoutMs: 400 });
  t.after(() => system.stop());
  const reports = new Map<string, { actors: string[]; required: boolean; notReady: string[] }>();
  system.on('start-timeout', (laneName: string, actors: string[], required: boolean) => {
    // What the system itself says about each worker at that moment (also served by /health/ready).
    const status = system.laneStatuses().find((s) => s.lane === laneName)!;
    reports.set(laneName, { actors, required, notReady: status.actors.filter((a) => !a.ready).map((a) => a.name) });
  });
  system.startLane(lane('mixed', [child('fine', 'counter'), child('stuck', 'never-ready')]));
  system.startLane({ ...lane('optional', [child('stuck-too', 'never-ready')]), required: false });
  await waitFor(() => reports.has('mixed') && reports.has('optional'), 10_000, 'both lanes with a hung worker reported');
  for (const report of reports.values()) assert.deepEqual(report.actors, report.notReady, 'named: exactly the workers not ready');
  assert.ok(reports.get('mixed')!.actors.includes('stuck'));
  assert.equal(reports.get('mixed')!.required, true);
  assert.deepEqual(reports.get('optional'), { actors: ['stuck-too'], required: false, notReady: ['stuck-too'] });
  const mixed = system.laneStatuses().find((s) => s.lane === 'mixed')!;
  assert.equal(mixed.state, 'starting');
  assert.match(mixed.lastError ?? '', /'stuck' did not report ready within 0\.4 s \(runtime\.start_timeout_seconds\)/);
  await waitFor(() => system.laneStatuses().find((s) => s.lane === 'mixed')!.actors.find((a) => a.name === 'fine')!.ready, 10_000, 'the healthy worker ready');
  assert.equal(system.laneStatuses().find((s) => s.lane === 'mixed')!.actors.find((a) => a.name === 'stuck')!.ready, false);
});

test('a lane whose workers are all ready when the watchdog fires is not reported', async (t) => {
  const system = new ActorSystem({ log: createLogger({ lane: 'node', level: 'silent', maxLinesPerSecond: 100 }), logLevel: 'silent', logRate: 100, startTimeoutMs: 400 });
  t.after(() => system.stop());
  const reported: string[] = [];
  let readyAtFire: boolean | null = null;
  system.on('start-timeout', (laneName: string) => reported.push(laneName));
  system.startLane(lane('healthy', [child('ok', 'counter')]));
  system.startLane(lane('marker', [child('hung', 'never-ready')]));
  // The marker lane was started after the healthy one, so its report comes after the healthy lane's check.
  system.on('start-timeout', (laneName: string) => {
    if (laneName === 'marker') readyAtFire = system.laneStatuses().find((s) => s.lane === 'healthy')!.state === 'ready';
  });
  await waitFor(() => reported.includes('marker'), 10_000, 'the marker lane reported');
  assert.equal(reported.includes('healthy'), readyAtFire === false, 'healthy is reported only if it was not ready yet (a loaded machine)');
});
