import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { CodedError } from '../../runtime/errors.js';
import { createTaskPool } from '../../runtime/pool.js';
import { backoffDelay } from '../../runtime/supervisor.js';
import { actorModule, child, lane, newSystem, quietPolicy, waitFor } from './helpers.js';
import type { ActorSystem } from '../../runtime/system.js';
import type { AnyMessage } from '../../runtime/protocol.js';

/** Stops the system after the test whatever happens, so a failing test cannot leave workers running. */
function track(t: TestContext, system: ActorSystem): ActorSystem {
  t.after(() => system.stop());
  return system;
}

test('a full mailbox makes senders wait and no message is lost, duplicated or reordered', async (t) => {
  for (const batching of [true, false]) {
    const system = track(t, newSystem({ batching }));
    system.startLane(lane('sink', [child('sink', 'counter', { mailboxCapacity: 4 })]));
    system.startLane(lane('producers', [child('p1', 'producer'), child('p2', 'producer'), child('p3', 'producer')]));
    await system.ask('sink', { type: 'slow', ms: 1 });
    let maxDepth = 0;
    const sampler = setInterval(() => {
      const sink = system.actorStats().find((a) => a.name === 'sink')!;
      maxDepth = Math.max(maxDepth, sink.mailboxDepth);
    }, 1);
    const perProducer = 300;
    const results = await Promise.all(['p1', 'p2', 'p3'].map((p) => system.ask<AnyMessage, { sent: number; waited: number }>(p, { type: 'produce', to: 'sink', count: perProducer })));
    clearInterval(sampler);
    await waitFor(() => system.actorStats().find((a) => a.name === 'sink')!.mailboxDepth === 0, 30_000, 'sink to drain');
    const counted = await system.ask<AnyMessage, { total: number; outOfOrder: number; senders: Record<string, number> }>('sink', { type: 'count' });
    assert.equal(counted.total, 3 * perProducer, `every message arrives exactly once (batching=${batching})`);
    assert.equal(counted.outOfOrder, 0, 'per-sender order is kept');
    assert.deepEqual(counted.senders, { p1: perProducer - 1, p2: perProducer - 1, p3: perProducer - 1 });
    assert.ok(results.some((r) => r.waited > 0), 'producers had to wait for credit');
    assert.ok(maxDepth <= 4, `depth never exceeds capacity (saw ${maxDepth})`);
    const stats = system.actorStats().find((a) => a.name === 'sink')!;
    assert.equal(stats.handled, BigInt(3 * perProducer + 2), 'handled counter counts every message');
    await system.stop();
  }
});

test('ask returns the handler result, carries coded errors and times out', async (t) => {
  const system = track(t, newSystem());
  system.startLane(lane('echo', [child('echo', 'counter')]));
  assert.deepEqual(await system.ask('echo', { type: 'echo', value: { big: 2n ** 70n, list: [1, 'a'] } }), { big: 2n ** 70n, list: [1, 'a'] });
  await assert.rejects(system.ask('echo', { type: 'fail-coded' }), (error: unknown) => error instanceof CodedError && error.code === 'invalid_request' && error.details?.why === 'test');
  assert.equal(await system.ask('echo', { type: 'echo', value: 'still alive' }), 'still alive', 'a coded error does not crash the actor');
  await system.ask('echo', { type: 'slow', ms: 300 });
  const pending = system.ask('echo', { type: 'item', sender: 'x', seq: 0 }, 50);
  await assert.rejects(pending, /did not answer 'item' within 50 ms/);
  await system.stop();
});

test('a crashed actor is restarted with growing delays', async (t) => {
  const system = track(t, newSystem());
  const delays: number[] = [];
  system.on('restarting', (_name: string, _attempt: number, delayMs: number) => delays.push(delayMs));
  system.startLane(lane('flaky', [child('flaky', 'counter')], { intensity: 10, backoffInitialMs: 40, backoffMaxMs: 10_000 }));
  for (let crash = 1; crash <= 3; crash += 1) {
    const started = Date.now();
    await assert.rejects(system.ask('flaky', { type: 'crash' }));
    await waitFor(() => delays.length === crash, 30_000, `restart ${crash}`);
    assert.equal(await system.ask('flaky', { type: 'echo', value: crash }), crash, 'serves again after restart');
    assert.ok(Date.now() - started >= delays[crash - 1]!, 'the restart waited its backoff');
  }
  assert.deepEqual(delays, [40, 80, 160]);
  const status = system.laneStatuses().find((l) => l.lane === 'flaky')!;
  assert.equal(status.restarts, 3);
  assert.equal(status.state, 'ready');
  assert.match(status.lastError ?? '', /crash on purpose/);
  await system.stop();
});

test('a crash loop beyond the restart intensity escalates and marks the lane failed', async (t) => {
  const system = track(t, newSystem());
  const escalations: string[] = [];
  system.on('escalated', (laneName: string) => escalations.push(laneName));
  system.startLane(lane('loop', [child('loop', 'counter')], { intensity: 2, periodMs: 60_000, backoffInitialMs: 10 }));
  system.startLane(lane('other', [child('other', 'counter')]));
  const loopLane = () => system.laneStatuses().find((l) => l.lane === 'loop')!;
  for (let i = 0; i < 3; i += 1) {
    await assert.rejects(system.ask('loop', { type: 'crash' }), /crash on purpose/);
    if (i < 2) await waitFor(() => loopLane().restarts === i + 1 && loopLane().state === 'ready', 30_000, 'restart');
  }
  await waitFor(() => escalations.length === 1, 30_000, 'escalation');
  const status = system.laneStatuses().find((l) => l.lane === 'loop')!;
  assert.equal(status.state, 'failed');
  assert.match(status.failedReason ?? '', /restart intensity exceeded: 3 restarts/);
  assert.equal(system.laneCounters().find((c) => c.lane === 'loop')!.escalations, 1);
  await assert.rejects(system.ask('loop', { type: 'echo', value: 1 }), /lane 'loop' failed/);
  assert.equal(await system.ask('other', { type: 'echo', value: 'ok' }), 'ok', 'other lanes keep serving');
  await system.stop();
});

test('an actor over its memory budget dies alone and is restarted', async (t) => {
  const system = track(t, newSystem());
  system.startLane(lane('hog', [child('hog', 'hog', { memoryMb: 24 })]));
  system.startLane(lane('bystander', [child('bystander', 'counter')]));
  await system.ask('hog', { type: 'grow' });
  await waitFor(() => system.actorStats().find((a) => a.name === 'hog')!.oomKills === 1, 20_000, 'the out-of-memory kill');
  const hogLane = system.laneStatuses().find((l) => l.lane === 'hog')!;
  assert.match(hogLane.lastError ?? '', /out of memory: exceeded its budget of 24 MB/);
  assert.equal(await system.ask('bystander', { type: 'echo', value: 'unaffected' }), 'unaffected');
  await waitFor(() => system.laneStatuses().find((l) => l.lane === 'hog')!.state === 'ready', 30_000, 'hog restart');
  assert.equal(await system.ask('hog', { type: 'ping' }), 'pong', 'the restarted actor serves again');
  await system.stop();
});

test('actors run CPU tasks on the shared piscina pool', async (t) => {
  const pool = createTaskPool({ module: actorModule('tasks'), threads: 2 });
  t.after(() => pool.destroy());
  const system = track(t, newSystem({ pool }));
  system.startLane(lane('hog', [child('hog', 'hog')]));
  assert.equal(await system.ask('hog', { type: 'task', n: 12 }), 144);
  // Two tasks that each hold their thread until both have started: a timed task could all run on
  // the first thread while the second is still starting on a loaded machine.
  const input = { barrier: new SharedArrayBuffer(4), arrivals: 2 };
  const threads = new Set(await Promise.all([1, 2].map(() => pool.run<number>('threadId', input))));
  assert.equal(threads.size, 2, 'the pool runs tasks on its configured number of threads');
  // A task's buffers handed over: the sender's is detached once sent (moved, not copied, through the root to the
  // pool), and the result's bytes come back whole.
  const size = 3 * 1024 * 1024 + 7;
  assert.deepEqual(await system.ask('hog', { type: 'transfer', size }), { detachedOnSend: true, received: size, intact: true });
  await system.stop();
});

test('a worker too busy to answer a metrics scrape in time is reported with its last answer, so its counters never vanish', async (t) => {
  const system = track(t, newSystem());
  system.startLane(lane('busy', [child('busy', 'counter')]));
  for (let seq = 0; seq < 3; seq += 1) await system.ask('busy', { type: 'item', sender: 's', seq });
  type Family = { name: string; values: Array<{ value: number }> };
  const items = (scrape: unknown[]) => (scrape as Family[][]).flat().find((family) => family.name === 'test_items_total')?.values[0]?.value;
  assert.equal(items(await system.collectActorMetrics()), 3, 'a worker that answers in time reports its counter');
  const blocked = system.ask('busy', { type: 'block', ms: 4000 }, 30_000);
  // A scrape that took its whole timeout is one the worker did not answer: that one must still carry the series.
  const deadline = Date.now() + 30_000;
  let timedOut = false;
  while (!timedOut && Date.now() < deadline) {
    const started = Date.now();
    const scrape = await system.collectActorMetrics(300);
    timedOut = Date.now() - started >= 300;
    assert.equal(items(scrape), 3, timedOut ? 'a scrape the worker missed carries its last answer' : 'a scrape it answered carries its counter');
  }
  assert.ok(timedOut, 'the blocked worker missed a scrape');
  await blocked;
  assert.equal(items(await system.collectActorMetrics()), 3);
  await system.stop();
});

test('backoff grows exponentially, is capped and jittered within bounds', () => {
  const policy = { ...quietPolicy, backoffInitialMs: 100, backoffMaxMs: 1000, jitter: 0.5 };
  assert.equal(backoffDelay(1, policy, () => 0.5), 100);
  assert.equal(backoffDelay(3, policy, () => 0.5), 400);
  assert.equal(backoffDelay(10, policy, () => 0.5), 1000);
  assert.equal(backoffDelay(2, policy, () => 0), 100);
  assert.equal(backoffDelay(2, policy, () => 1), 300);
});

test('stopLane stops a running lane and removes it: its queued messages are dropped, asks to it fail, its name is unknown, others keep running', async (t) => {
  const system = track(t, newSystem());
  system.startLane(lane('keep', [child('keep', 'counter')]));
  system.startLane(lane('gone', [child('gone', 'counter', { mailboxCapacity: 1024 })]));
  await system.ask('gone', { type: 'slow', ms: 50 });
  // Messages queued behind a slow handler: the stop drops what the actor has not taken yet.
  for (let seq = 0; seq < 200; seq += 1) await system.send('gone', { type: 'item', sender: 'root', seq });
  const pending = system.ask('gone', { type: 'count' }, 30_000);
  assert.equal(await system.stopLane('gone'), true);
  await assert.rejects(pending, 'an ask still queued fails when its lane is stopped');
  assert.equal(system.laneStatuses().some((l) => l.lane === 'gone'), false, 'the lane is no longer listed');
  assert.equal(system.actorStats().some((a) => a.name === 'gone'), false, 'its actor is no longer listed');
  await assert.rejects(system.ask('gone', { type: 'count' }, 5000), 'an ask to the removed actor is refused');
  assert.equal(await system.stopLane('gone'), false, 'stopping it again reports no such lane');
  assert.equal(await system.ask('keep', { type: 'echo', value: 'alive' }), 'alive', 'the other lane keeps running');
  // The name can be taken again by a new lane, which starts fresh.
  system.startLane(lane('gone', [child('gone', 'counter')]));
  assert.deepEqual(await system.ask('gone', { type: 'count' }), { total: 0, outOfOrder: 0, senders: {} });
  await system.stop();
});

test('stop(order, last) stops the named lanes in order, then the others together, then the last lanes', async (t) => {
  const system = track(t, newSystem());
  for (const name of ['first', 'middle', 'after']) system.startLane(lane(name, [child(name, 'counter')]));
  await waitFor(() => system.laneStatuses().every((l) => l.actors.every((a) => a.ready)), 30_000, 'all ready');
  // The middle lane's thread is busy for a while: a lane stopped after it must still run until it has stopped.
  await system.send('middle', { type: 'block', ms: 2000 });
  // Stop only once its thread is inside the block (a scrape it cannot answer takes its whole timeout): a stop that
  // reached the worker before it took the message would end it at once.
  for (let busy = false; !busy;) {
    const asked = Date.now();
    await system.collectActorMetrics(100);
    busy = Date.now() - asked >= 100;
  }
  const stoppedAt = new Map<string, number>();
  const started = Date.now();
  const stopping = system.stop(['first'], ['after']);
  await waitFor(() => {
    for (const status of system.laneStatuses()) if (!stoppedAt.has(status.lane) && status.actors.every((a) => !a.running)) stoppedAt.set(status.lane, Date.now() - started);
    return stoppedAt.size === 3;
  }, 30_000, 'every lane stopped');
  await stopping;
  assert.ok(stoppedAt.get('first')! <= stoppedAt.get('middle')!, JSON.stringify([...stoppedAt]));
  assert.ok(stoppedAt.get('middle')! <= stoppedAt.get('after')!, JSON.stringify([...stoppedAt]));
  assert.ok(stoppedAt.get('after')! >= 300, `the last lane ran while the middle one was busy: ${JSON.stringify([...stoppedAt])}`);
});
