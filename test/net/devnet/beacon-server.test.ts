/**
 * The devnet's Beacon-API-shaped endpoint: a light client bootstraps from the devnet's genesis
 * block root, follows the period updates across sync-committee hand-overs and the finality update,
 * verifying every signature and branch, and ends at the same finalized execution block the
 * finality_checkpoints route names; the agreement path reads that block's execution payload.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createBeaconClient } from '../../../net/beacon/api-client.js';
import { readFinalizedAnchor } from '../../../net/beacon/finalized-anchor.js';
import { BeaconLightClient } from '../../../net/beacon/light-client.js';
import { bytesToHex, hexToBytes } from '../../../net/eth/hex.js';
import { createDevnet, type Devnet } from '../../../net/devnet/index.js';
import { devnetBeaconConfig } from '../../../net/devnet/beacon-chain.js';
import { DevnetBeaconChain } from '../../../net/devnet/beacon-objects.js';
import { startDevnetBeaconServer, type DevnetBeaconServer } from '../../../net/devnet/beacon-server.js';
import { subscribeBeaconEvents } from '../../../net/beacon/event-stream.js';
import { parseFinalityUpdate } from '../../../net/beacon/json.js';
import { validateFinalityUpdate } from '../../../net/beacon/sync-protocol.js';

const HEAD = 150; // two full sync-committee periods of 64 slots and part of the third
const LAG = 8;

describe('devnet Beacon API endpoint', () => {
  let devnet: Devnet;
  let server: DevnetBeaconServer;
  before(async () => {
    devnet = createDevnet({ seed: 'beacon-test', transactionsPerBlock: 1, blobTransactionsPerBlock: 0, reorgEvery: 0, finalityLag: LAG });
    await devnet.advanceTo(HEAD);
    const chain = new DevnetBeaconChain(devnetBeaconConfig(devnet.config), { blockAt: (n) => devnet.blockByNumber(n) && { header: devnet.blockByNumber(n)!.block.header, hash: devnet.blockByNumber(n)!.hash }, head: () => devnet.head().number }, 'beacon-test', LAG);
    server = await startDevnetBeaconServer('127.0.0.1:0', chain, () => devnet.head().number);
  });
  after(async () => {
    await server?.close();
  });

  const client = () => createBeaconClient({ url: server.url, timeoutMs: 5000, maxRetries: 0, backoffInitialMs: 10, backoffMaxMs: 10 });

  test('a light client from the genesis root verifies every update and reaches the finalized checkpoint', async () => {
    const genesis = (await client().get('/eth/v1/beacon/headers/0')) as { data: { root: string } };
    const config = devnetBeaconConfig(devnet.config);
    const light = new BeaconLightClient(config, hexToBytes(genesis.data.root, 32), [client()]);
    const report = await light.sync();
    assert.deepEqual(report.problems, []);
    // Periods 0, 1, 2 and the finality update.
    assert.equal(report.verified, 4);
    const expectedSlot = Math.floor((HEAD - 1 - LAG) / 8) * 8;
    assert.equal(report.finalized?.slot, expectedSlot);
    assert.equal(report.finalized?.number, expectedSlot);
    assert.equal(report.finalized?.hash, devnet.blockByNumber(expectedSlot)!.hash);
    // The agreement path names the same block.
    const anchor = await readFinalizedAnchor(client());
    assert.deepEqual(anchor.execution, { number: expectedSlot, hash: devnet.blockByNumber(expectedSlot)!.hash });
    assert.equal(anchor.epoch, expectedSlot / 8);
  });

  test('a finality update the light client took is not verified again: the next round over the same head verifies nothing, a new head\'s update is verified', async () => {
    const genesis = (await client().get('/eth/v1/beacon/headers/0')) as { data: { root: string } };
    const light = new BeaconLightClient(devnetBeaconConfig(devnet.config), hexToBytes(genesis.data.root, 32), [client()]);
    const first = await light.sync();
    assert.ok(first.verified > 0, JSON.stringify(first));
    const again = await light.sync();
    assert.deepEqual([again.verified, again.finalized, again.problems], [0, first.finalized, []], 'the same update, not verified again');
    const event = await client().get('/eth/v1/beacon/light_client/finality_update');
    assert.deepEqual(light.offerFinalityUpdate(event), first.finalized, 'nor when an event brings it');
    // A new head brings a new finality update (another attested header and signature): verified.
    await devnet.advanceTo(devnet.head().number + 1);
    const next = await light.sync();
    assert.deepEqual([next.verified, next.problems], [1, []]);
    // The update taken, its signature changed: not the same update, so it is verified, and refused.
    const tampered = (await client().get('/eth/v1/beacon/light_client/finality_update')) as { data: { sync_aggregate: { sync_committee_signature: string } } };
    const signature = tampered.data.sync_aggregate.sync_committee_signature;
    tampered.data.sync_aggregate.sync_committee_signature = `${signature.slice(0, -2)}${signature.endsWith('00') ? '01' : '00'}`;
    assert.throws(() => light.offerFinalityUpdate(tampered));
  });

  test('a client configured for another devnet seed rejects the signatures', async () => {
    const genesis = (await client().get('/eth/v1/beacon/headers/0')) as { data: { root: string } };
    const other = devnetBeaconConfig({ ...devnet.config, seed: 'another-seed' });
    const light = new BeaconLightClient(other, hexToBytes(genesis.data.root, 32), [client()]);
    const report = await light.sync();
    assert.equal(report.finalized?.slot, 0);
    assert.ok(report.problems.some((p) => p.includes('invalid_signature')), report.problems.join('; '));
  });

  test('the documented devnet checkpoint (README, config.example.toml, e2e) is the default devnet genesis beacon block root', () => {
    const defaults = createDevnet({});
    const chain = new DevnetBeaconChain(devnetBeaconConfig(defaults.config), { blockAt: (n) => (n === 0 ? { header: defaults.genesis.block.header, hash: defaults.genesis.hash } : undefined), head: () => 0 }, String(defaults.config.seed), defaults.config.finalityLag);
    assert.equal(bytesToHex(chain.slot(0)!.root), '0x09b0f1635ea8c671af3ba22f56bc2c58e66cb9925c5038a3ae20a9b850710b45');
  });

  test('unknown roots and bad queries answer 404 and 400', async () => {
    const response = await fetch(`${server.url}/eth/v1/beacon/light_client/bootstrap/0x${'ab'.repeat(32)}`);
    assert.equal(response.status, 404);
    const bad = await fetch(`${server.url}/eth/v1/beacon/light_client/updates?start_period=x&count=1`);
    assert.equal(bad.status, 400);
  });

  test('the event stream sends finalized_checkpoint and a verifiable light_client_finality_update when the finalized epoch moves', async () => {
    const events: Array<{ topic: string; data: any }> = [];
    let primed = false;
    let connected!: () => void;
    const open = new Promise<void>((resolve) => { connected = resolve; });
    let got!: () => void;
    const both = new Promise<void>((resolve) => { got = resolve; });
    const stream = subscribeBeaconEvents({
      url: server.url, topics: ['finalized_checkpoint', 'light_client_finality_update'], backoffInitialMs: 10, backoffMaxMs: 50,
      onEvent: (topic, data) => {
        events.push({ topic, data: JSON.parse(data) });
        if (events.length >= 2 && primed) got();
      },
      onState: (state) => { if (state.connected) connected(); },
    });
    try {
      await open;
      // What the endpoint says first is the current checkpoint; the test is about the next one.
      server.headChanged();
      while (events.length < 2) await new Promise((resolve) => setImmediate(resolve));
      events.length = 0;
      primed = true;
      // Heads until the finalized epoch moves (the devnet source calls headChanged after each block).
      const startEpoch = Math.floor((devnet.head().number - 1 - LAG) / 8);
      while (Math.floor((devnet.head().number - 1 - LAG) / 8) === startEpoch) {
        await devnet.advanceTo(devnet.head().number + 1);
        server.headChanged();
      }
      await both;
    } finally {
      stream.close();
    }
    assert.deepEqual(events.map((e) => e.topic), ['finalized_checkpoint', 'light_client_finality_update']);
    const finalizedSlot = Math.floor((devnet.head().number - 1 - LAG) / 8) * 8;
    const header = (await client().get(`/eth/v1/beacon/headers/${finalizedSlot}`)) as { data: { root: string } };
    assert.equal(events[0]!.data.block, header.data.root);
    assert.equal(events[0]!.data.epoch, String(finalizedSlot / 8));
    // The event's finality update is the route's and verifies against a synced light client's store.
    const config = devnetBeaconConfig(devnet.config);
    const update = parseFinalityUpdate(config, events[1]!.data);
    assert.equal(update.finalizedHeader.beacon.slot, finalizedSlot);
    const genesis = (await client().get('/eth/v1/beacon/headers/0')) as { data: { root: string } };
    const light = new BeaconLightClient(config, hexToBytes(genesis.data.root, 32), [client()]);
    await light.sync();
    validateFinalityUpdate(config, light.current!, update, Number.MAX_SAFE_INTEGER);
  });

  test('the event stream refuses an unknown topic with 400 naming it', async () => {
    const response = await fetch(`${server.url}/eth/v1/events?topics=head,finalized_checkpoint`);
    assert.equal(response.status, 400);
    assert.match(((await response.json()) as { message: string }).message, /"head"/);
  });
});
