import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ingestWorkload } from '../../bench/workloads/ingest.js';

describe('ingest workload', () => {
  it('a smoke run reports finite, positive figures for every configuration, stage and RSS sample', async () => {
    const figures = await ingestWorkload.run({ smoke: true, rounds: 1, durationSeconds: 1, mailboxCapacity: 1024 });
    for (const configuration of ['1 thread, commit/block', '1 thread, commit/64', '2 workers, commit/block', '2 workers, commit/64']) {
      const names = figures.filter((f) => f.name.startsWith(`${configuration}: `)).map((f) => f.name.slice(configuration.length + 2));
      assert.deepEqual(names.slice(0, 2), ['verified ingest', 'wall time']);
      for (const stage of ['decode header+body', 'verify (hash, roots, bloom)', 'blob transform (+blob senders)', 'commit', 'RSS middle', 'RSS anonymous end']) assert.ok(names.includes(stage), `${configuration}: ${stage}`);
    }
    assert.ok(figures.some((f) => f.name === 'sender recovery, blob txs only'));
    for (const f of figures) {
      for (const value of [f.min, f.median, f.max]) assert.ok(Number.isFinite(value) && value > 0, `${f.name}: ${value}`);
      assert.ok(f.min <= f.median && f.median <= f.max, f.name);
    }
  });
});
