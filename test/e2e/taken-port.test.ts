import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removeDir, startNodeProcess } from '../support/node-process.js';

// uWS binds with SO_REUSEPORT, so before this check a second node on a running node's port started
// without a word and took part of the first node's requests.
test('a node refuses to start on a listener address another node holds, naming the key, and the first node keeps its traffic', async () => {
  const first = await startNodeProcess();
  const apiAddress = new URL(first.baseUrl).host;
  const rpcAddress = new URL(first.rpcUrl).host;
  const second = await startNodeProcess({ waitReady: false, sets: [`listeners.api=${apiAddress}`, `listeners.rpc_http=${rpcAddress}`] });
  try {
    // Bounded: without the check the second node starts and never exits.
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([second.exited, new Promise<string>((resolve) => { timer = setTimeout(() => resolve('still running after 60 s'), 60_000); })]);
    clearTimeout(timer);
    const output = second.output.join('\n');
    assert.equal(code, 1, `the second node must stop:\n${output}`);
    assert.match(output, new RegExp(`config key 'listeners\\.api' = "${apiAddress}": a free address \\(another process already listens on it\\)`));
    assert.match(output, new RegExp(`config key 'listeners\\.rpc_http' = "${rpcAddress}"`));
    assert.doesNotMatch(output, /listeners\.rpc_ws/, 'the free address is not reported');

    // Every request still reaches the first node (its request ids carry its own store epoch).
    const epoch = ((await (await fetch(`${first.baseUrl}/health/live`)).json()) as { store: { epoch: string } }).store.epoch;
    for (let i = 0; i < 20; i += 1) {
      const live = (await (await fetch(`${first.baseUrl}/health/live`)).json()) as { store: { epoch: string } };
      assert.equal(live.store.epoch, epoch);
    }
  } finally {
    await second.stop('SIGKILL');
    await first.stop();
    removeDir(first.dir);
    removeDir(second.dir);
  }
});
