/**
 * The beacon_api finality backend against Beacon API servers on loopback: agreement across two or
 * three endpoints, a disagreement that fails closed naming the endpoints and what they report, an
 * endpoint that is down (agreement still reachable, or not), an endpoint that does not have its own
 * finalized block; and light-client mode following the recorded mainnet objects, where an endpoint
 * serving a tampered finality update is not believed.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBeaconFinality, type BeaconApiFinalityArgs } from '../../../actors/finality/beacon-api.js';
import { chainConfigToData, MAINNET } from '../../../net/beacon/config.js';
import { FIXTURES } from '../../support/paths.js';
import { startBeaconServer, type Route, type TestBeaconServer } from '../../net/beacon/beacon-server.js';

const root = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const hash = (n: number) => `0x${(n + 0xabc).toString(16).padStart(64, '0')}`;

/** The routes of an endpoint whose finalized checkpoint is `epoch`/`blockRoot` with execution block `number`/`blockHash`. */
function finalizedRoutes(epoch: number, blockRoot: string, number: number, blockHash: string): Map<string, Route> {
  return new Map<string, Route>([
    ['/eth/v1/beacon/states/head/finality_checkpoints', { data: { previous_justified: { epoch: String(epoch + 1), root: root(999) }, current_justified: { epoch: String(epoch + 2), root: root(998) }, finalized: { epoch: String(epoch), root: blockRoot } } }],
    [`/eth/v2/beacon/blocks/${blockRoot}`, { version: 'electra', data: { message: { slot: String(epoch * 32), body: { execution_payload: { block_number: String(number), block_hash: blockHash } } } } }],
  ]);
}

const servers: TestBeaconServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(routes: Map<string, Route>): Promise<TestBeaconServer> {
  const server = await startBeaconServer(routes);
  servers.push(server);
  return server;
}

function args(urls: string[], minimumAgreement: number, extra: Partial<BeaconApiFinalityArgs> = {}): BeaconApiFinalityArgs {
  return { urls, minimumAgreement, requestTimeoutMs: 2000, maxRetries: 1, backoffInitialMs: 10, backoffMaxMs: 20, lightClient: null, ...extra };
}

describe('beacon_api finality by agreement', () => {
  test('three endpoints agreeing give the finalized execution block', async () => {
    const urls = await Promise.all([1, 2, 3].map(async () => (await serve(finalizedRoutes(100, root(1), 3200, hash(1)))).url));
    const finality = createBeaconFinality(args(urls, 3));
    const round = await finality.round();
    finality.close();
    assert.equal(round.kind, 'finalized');
    assert.ok(round.kind === 'finalized');
    assert.equal(round.number, 3200);
    assert.equal(round.hash, hash(1));
    assert.match(round.detail, /epoch 100/);
  });

  test('two endpoints naming different roots for one epoch disagree: nothing advances and the reason names both', async () => {
    const a = await serve(finalizedRoutes(100, root(1), 3200, hash(1)));
    const b = await serve(finalizedRoutes(100, root(2), 3200, hash(2)));
    const finality = createBeaconFinality(args([a.url, b.url], 2));
    const round = await finality.round();
    finality.close();
    assert.equal(round.kind, 'disagreement');
    assert.ok(round.kind === 'disagreement');
    assert.ok(round.reason.includes(a.url) && round.reason.includes(b.url), round.reason);
    assert.match(round.reason, new RegExp(`${root(1)}.*${root(2)}`));
  });

  test('a disagreement is fail-closed even when the other endpoints would reach the minimum', async () => {
    const honest = await Promise.all([1, 2].map(() => serve(finalizedRoutes(100, root(1), 3200, hash(1)))));
    const liar = await serve(finalizedRoutes(101, root(7), 3200, hash(7)));
    const finality = createBeaconFinality(args([...honest.map((s) => s.url), liar.url], 2));
    const round = await finality.round();
    finality.close();
    assert.equal(round.kind, 'disagreement');
    assert.ok(round.kind === 'disagreement' && round.reason.includes('block 3200'), JSON.stringify(round));
  });

  test('an endpoint that is down lowers nothing while the others still agree; below the minimum finality is unavailable', async () => {
    const up = await Promise.all([1, 2].map(() => serve(finalizedRoutes(100, root(1), 3200, hash(1)))));
    const down = await serve(new Map([['/eth/v1/beacon/states/head/finality_checkpoints', { status: 503 }]]));
    const twoOfThree = createBeaconFinality(args([...up.map((s) => s.url), down.url], 2));
    const round = await twoOfThree.round();
    twoOfThree.close();
    assert.equal(round.kind, 'finalized');
    assert.ok(round.kind === 'finalized' && round.problems.some((p) => p.includes(down.url) && p.includes('HTTP 503')));
    // The 503 was retried (max_retries = 1): two requests.
    assert.equal(down.requests.length, 2);
    const threeOfThree = createBeaconFinality(args([...up.map((s) => s.url), down.url], 3));
    const unavailable = await threeOfThree.round();
    threeOfThree.close();
    assert.equal(unavailable.kind, 'unavailable');
    assert.ok(unavailable.kind === 'unavailable' && unavailable.reason.includes('2 of 3 beacon endpoints answered, 3 must agree'), JSON.stringify(unavailable));
  });

  test('an endpoint that does not have its own finalized block is a failure, not a vote', async () => {
    const routes = finalizedRoutes(100, root(1), 3200, hash(1));
    routes.delete(`/eth/v2/beacon/blocks/${root(1)}`);
    const missing = await serve(routes);
    const finality = createBeaconFinality(args([missing.url], 1));
    const round = await finality.round();
    finality.close();
    assert.equal(round.kind, 'unavailable');
    assert.ok(round.kind === 'unavailable' && round.reason.includes(`does not have its own finalized block ${root(1)}`), JSON.stringify(round));
  });

  test('a lagging endpoint is not a disagreement: the newest checkpoint with enough support wins', async () => {
    const ahead = await Promise.all([1, 2].map(() => serve(finalizedRoutes(101, root(2), 3232, hash(2)))));
    const behind = await serve(finalizedRoutes(100, root(1), 3200, hash(1)));
    const finality = createBeaconFinality(args([behind.url, ...ahead.map((s) => s.url)], 2));
    const round = await finality.round();
    finality.close();
    assert.ok(round.kind === 'finalized' && round.number === 3232, JSON.stringify(round));
  });

  test('a timeout is a failure after the retries', async () => {
    const { createServer } = await import('node:http');
    const silent = createServer(() => { /* never answers */ });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    const finality = createBeaconFinality(args([url], 1, { requestTimeoutMs: 100 }));
    const round = await finality.round();
    finality.close();
    silent.closeAllConnections();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    assert.ok(round.kind === 'unavailable' && round.reason.includes('(timeout) after 2 attempts'), JSON.stringify(round));
  });
});

describe('beacon_api finality by light-client proof (recorded mainnet objects)', () => {
  const read = (file: string) => JSON.parse(readFileSync(join(FIXTURES, 'helios/beacon', file), 'utf8'));
  const CHECKPOINT = '0x5afc212a7924789b2bc86acad3ab3a6ffb1f6e97253ea50bee7f4f51422c9275' as const;
  const finalityUpdate = read('finality.json');
  const lightClientRoutes = (finality: unknown) => new Map<string, Route>([
    [`/eth/v1/beacon/light_client/bootstrap/${CHECKPOINT}`, read('bootstrap.json')],
    ['/eth/v1/beacon/light_client/updates', read('updates.json')],
    ['/eth/v1/beacon/light_client/finality_update', finality],
  ]);

  test('bootstraps from the checkpoint, follows the period updates and the finality update; a tampered endpoint is not believed', async () => {
    const tampered = structuredClone(finalityUpdate);
    tampered.data.finalized_header.execution.block_hash = `0x${'11'.repeat(32)}`;
    const liar = await serve(lightClientRoutes(tampered));
    const honest = await serve(lightClientRoutes(finalityUpdate));
    const finality = createBeaconFinality(args([liar.url, honest.url], 1, { lightClient: { checkpointRoot: CHECKPOINT, chain: chainConfigToData(MAINNET) } }));
    const round = await finality.round();
    // Pushed by an event stream: verified from the event's own data; a tampered one is refused for its reason.
    await assert.rejects(finality.offer('light_client_finality_update', JSON.stringify(tampered)), /execution_branch/);
    const pushed = await finality.offer('light_client_finality_update', JSON.stringify(finalityUpdate));
    assert.ok(pushed?.kind === 'finalized' && pushed.number === Number(finalityUpdate.data.finalized_header.execution.block_number) && /\(event\)/.test(pushed.detail), JSON.stringify(pushed));
    assert.equal(await finality.offer('finalized_checkpoint', '{}'), null, 'a checkpoint event alone proves nothing: a round follows');
    finality.close();
    assert.ok(round.kind === 'finalized', JSON.stringify(round));
    assert.equal(round.number, Number(finalityUpdate.data.finalized_header.execution.block_number));
    assert.equal(round.hash, finalityUpdate.data.finalized_header.execution.block_hash);
    assert.match(round.detail, /light-client verified slot 7109344/);
    assert.ok(round.problems.some((p) => p.includes(liar.url) && p.includes('invalid_header')), JSON.stringify(round.problems));
    assert.ok(liar.requests.some((r) => r.startsWith('/eth/v1/beacon/light_client/updates?start_period=862&count=')), liar.requests.join(' '));
  });

  test('a bootstrap that does not match the checkpoint root is refused: finality stays unavailable', async () => {
    const wrongRoot = `0x${'22'.repeat(32)}` as const;
    const routes = lightClientRoutes(finalityUpdate);
    routes.set(`/eth/v1/beacon/light_client/bootstrap/${wrongRoot}`, read('bootstrap.json'));
    const server = await serve(routes);
    const finality = createBeaconFinality(args([server.url], 1, { lightClient: { checkpointRoot: wrongRoot, chain: chainConfigToData(MAINNET) } }));
    const round = await finality.round();
    finality.close();
    assert.ok(round.kind === 'unavailable' && round.reason.includes('bootstrap_root_mismatch'), JSON.stringify(round));
  });
});
