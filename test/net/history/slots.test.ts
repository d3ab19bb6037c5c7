import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSlots } from '../../../net/history/slots.js';

test('at most `size` tasks run at once; the others wait in arrival order; a failing task frees its slot', async () => {
  const slots = createSlots(2);
  let running = 0;
  let peak = 0;
  const order: number[] = [];
  const gates: Array<() => void> = [];
  const task = (id: number, fail = false) => slots.run(async () => {
    running += 1;
    peak = Math.max(peak, running);
    order.push(id);
    await new Promise<void>((resolve) => gates.push(resolve));
    running -= 1;
    if (fail) throw new Error(`task ${id} failed`);
    return id;
  });
  const results = [task(1, true), task(2), task(3), task(4)].map((p) => p.then((v) => v, (e: Error) => e.message));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(order, [1, 2]);
  assert.equal(slots.busy, 2);
  assert.equal(slots.waiting, 2);
  while (order.length < 4 || gates.length > 0) {
    const gate = gates.shift();
    if (gate) gate();
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.deepEqual(await Promise.all(results), ['task 1 failed', 2, 3, 4]);
  assert.deepEqual(order, [1, 2, 3, 4]);
  assert.equal(peak, 2);
  assert.equal(slots.busy, 0);
});
