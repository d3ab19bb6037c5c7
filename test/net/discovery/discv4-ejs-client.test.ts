/**
 * discv4 interop with a third-party execution client: `@ethereumjs/client` 0.10.5 (installed apart, by
 * `npm ci --prefix test/peers/ethereumjs-client`) runs its own discv4 (`--discV4=true`); two of the node's discv4
 * services seeded only with its enode URL get its PONG and find each other through its NEIGHBORS answers, with their
 * RLPx TCP ports. Both run in a network namespace made for the test (`unshare -n`, loopback only; the client binds
 * 0.0.0.0). Skipped, saying why, where the client is not installed or no namespace can be made.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { EJS_CLIENT_CLI, ejsClientSkipReason, runProbeInNamespace } from '../../support/ejs-client.js';
const RUN = fileURLToPath(new URL('./ejs-discv4-probe.js', import.meta.url));


describe('discv4 with @ethereumjs/client as a third-party bootnode', () => {
  const skip = ejsClientSkipReason();
  it('two discv4 services seeded with the client find it and, through its neighbours, each other', { skip: skip ?? false, timeout: 120_000 }, async () => {
    const { code, result, stderr } = await runProbeInNamespace<{
      ok: boolean; error?: string; clientAnswered: boolean; tables: number[];
      aByB: { tcp: number; udp: number; expectedUdp: number; ip: string }; bByA: { tcp: number; udp: number; expectedUdp: number };
    }>(RUN, [EJS_CLIENT_CLI]);
    assert.equal(result.ok, true, `${result.error ?? 'no result'} (exit ${code}; stderr: ${stderr})`);
    assert.equal(code, 0);
    assert.equal(result.clientAnswered, true);
    assert.deepEqual(result.aByB, { tcp: 30_611, udp: result.aByB.expectedUdp, expectedUdp: result.aByB.expectedUdp, ip: '127.0.0.1' });
    assert.deepEqual(result.bByA, { tcp: 30_612, udp: result.bByA.expectedUdp, expectedUdp: result.bByA.expectedUdp });
    for (const size of result.tables) assert.ok(size >= 1);
  });
});
