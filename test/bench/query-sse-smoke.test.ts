import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queryWorkload } from '../../bench/workloads/query.js';
import { sseWorkload } from '../../bench/workloads/sse.js';
import type { Figure, WorkloadOptions } from '../../bench/workload.js';

const SMOKE: WorkloadOptions = { smoke: true, rounds: 1, durationSeconds: 1, mailboxCapacity: 1024, connections: 50 };

function byName(figures: readonly Figure[], name: string): Figure {
  const figure = figures.find((f) => f.name === name);
  assert.ok(figure, `figure '${name}' is reported`);
  return figure;
}

function assertWellFormed(figures: readonly Figure[]): void {
  for (const f of figures) {
    for (const value of [f.min, f.median, f.max]) assert.ok(Number.isFinite(value) && value >= 0, `${f.name}: ${value}`);
    assert.ok(f.min <= f.median && f.median <= f.max, f.name);
  }
}

/** Zero counts are the point of some figures; latencies have millisecond resolution and an idle machine has load 0. */
function assertPositive(figures: readonly Figure[], except: RegExp): void {
  for (const f of figures.filter((figure) => !except.test(figure.name))) assert.ok(f.min > 0, `${f.name}: ${f.min}`);
}

describe('query and sse bench workloads', () => {
  it('a query smoke run serves both routes from the node and the baseline with finite, positive figures and no errors', async () => {
    const figures = await queryWorkload.run(SMOKE);
    assertWellFormed(figures);
    assertPositive(figures, /latency|runs with errors|machine load/);
    assert.equal(byName(figures, 'runs with errors, timeouts or non-2xx').max, 0);
    for (const scenario of ['one block', '20-block page']) {
      assert.ok(byName(figures, `${scenario}, node: throughput`).min > 0);
      assert.ok(byName(figures, `${scenario}, naive baseline: throughput`).min > 0);
      assert.ok(byName(figures, `${scenario}: node / baseline throughput`).min > 0);
    }
  });

  it('an sse smoke run holds every stream open on the node and the baseline and delivers the changes of the window to each', async () => {
    const figures = await sseWorkload.run(SMOKE);
    assertWellFormed(figures);
    assertPositive(figures, /disconnects|commit → client|p99 latency|event-loop delay|machine load/);
    for (const who of ['node', 'naive baseline']) {
      assert.equal(byName(figures, `${who}: streams established`).min, 50);
      assert.equal(byName(figures, `${who}: disconnects`).max, 0);
      // A change at the window's edge can reach some streams just inside it and others just outside.
      const delivered = byName(figures, `${who}: (stream, change) pairs delivered`);
      assert.ok(delivered.min > 0.8 && delivered.max <= 1, `${who}: delivered ${delivered.min}`);
      assert.ok(byName(figures, `${who}: events delivered`).min > 0);
    }
  });
});
