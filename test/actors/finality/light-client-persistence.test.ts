/**
 * The light-client store kept across restarts in the node's LMDB store (`finality.lightClient`):
 * a restarted backend continues from it without asking any endpoint for a bootstrap; a stored store
 * for another checkpoint, from another beacon chain, whose finalized execution block contradicts the
 * stored canonical chain, or that does not decode is discarded with a log line, and the backend
 * bootstraps again. Recorded mainnet objects, Beacon API servers on loopback, a real store on disk.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBeaconFinality, type BeaconApiFinalityArgs, type BeaconRound } from '../../../actors/finality/beacon-api.js';
import { storePersistence } from '../../../actors/finality/persistence.js';
import { chainConfigFromData, chainConfigToData, MAINNET } from '../../../net/beacon/config.js';
import { parseBootstrap } from '../../../net/beacon/json.js';
import { encodeStore, restoreStore, StoreRecordRejected } from '../../../net/beacon/store-codec.js';
import { initializeStore } from '../../../net/beacon/sync-protocol.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { openStore, type Store } from '../../../store/store.js';
import { u64Key } from '../../../store/keys.js';
import { loadLightClientRecord, saveLightClientRecord } from '../../../store/light-client-store.js';
import { FIXTURES } from '../../support/paths.js';
import { startBeaconServer, type Route, type TestBeaconServer } from '../../net/beacon/beacon-server.js';

const read = (file: string) => JSON.parse(readFileSync(join(FIXTURES, 'helios/beacon', file), 'utf8'));
const CHECKPOINT = '0x5afc212a7924789b2bc86acad3ab3a6ffb1f6e97253ea50bee7f4f51422c9275' as const;
const BOOTSTRAP_PATH = `/eth/v1/beacon/light_client/bootstrap/${CHECKPOINT}`;
const finalityUpdate = read('finality.json');
const FINALIZED_NUMBER = Number(finalityUpdate.data.finalized_header.execution.block_number);

const servers: TestBeaconServer[] = [];
const dirs: string[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function endpoint(): Promise<TestBeaconServer> {
  const server = await startBeaconServer(new Map<string, Route>([
    [BOOTSTRAP_PATH, read('bootstrap.json')],
    ['/eth/v1/beacon/light_client/updates', read('updates.json')],
    ['/eth/v1/beacon/light_client/finality_update', finalityUpdate],
  ]));
  servers.push(server);
  return server;
}

function tempStore(): { dataDir: string; open: () => Store } {
  const dataDir = mkdtempSync(join(tmpdir(), 'lc-store-'));
  dirs.push(dataDir);
  return { dataDir, open: () => openStore({ dataDir, chainId: 1 }) };
}

interface Logged { level: 'info' | 'warn'; message: string; fields: Record<string, unknown> }

function args(url: string, checkpointRoot: string = CHECKPOINT, chain = chainConfigToData(MAINNET)): BeaconApiFinalityArgs {
  return { urls: [url], minimumAgreement: 1, requestTimeoutMs: 2000, maxRetries: 0, backoffInitialMs: 10, backoffMaxMs: 20, lightClient: { checkpointRoot: checkpointRoot as `0x${string}`, chain } };
}

/** One finality round of a backend on `store` (a node start), with what it logged. */
async function startOnce(store: Store, backendArgs: BeaconApiFinalityArgs): Promise<{ round: BeaconRound; logged: Logged[] }> {
  const logged: Logged[] = [];
  const log = {
    info: (message: string, fields: Record<string, unknown> = {}) => logged.push({ level: 'info', message, fields }),
    warn: (message: string, fields: Record<string, unknown> = {}) => logged.push({ level: 'warn', message, fields }),
  };
  const finality = createBeaconFinality(backendArgs, storePersistence(store, log));
  try {
    return { round: await finality.round(), logged };
  } finally {
    finality.close();
  }
}

const bootstraps = (server: TestBeaconServer) => server.requests.filter((r) => r.startsWith('/eth/v1/beacon/light_client/bootstrap/')).length;

describe('light-client store across restarts', () => {
  test('a restart resumes from the stored store: same finality, no second bootstrap request', async () => {
    const server = await endpoint();
    const { open } = tempStore();
    let store = open();
    const first = await startOnce(store, args(server.url));
    assert.ok(first.round.kind === 'finalized' && first.round.number === FINALIZED_NUMBER, JSON.stringify(first.round));
    assert.equal(bootstraps(server), 1);
    assert.notEqual(loadLightClientRecord(store), undefined, 'the store was written');
    await store.close();

    store = open();
    const before = server.requests.length;
    const second = await startOnce(store, args(server.url));
    await store.close();
    assert.ok(second.round.kind === 'finalized' && second.round.number === FINALIZED_NUMBER && second.round.hash === (first.round.kind === 'finalized' ? first.round.hash : ''), JSON.stringify(second.round));
    assert.equal(bootstraps(server), 1, `no second bootstrap: ${server.requests.slice(before).join(' ')}`);
    // Resumed at the finalized period: no period updates are needed to verify the finality update.
    assert.deepEqual(server.requests.slice(before), ['/eth/v1/beacon/light_client/finality_update']);
    assert.ok(second.logged.some((l) => l.level === 'info' && l.message === 'light client resumed from its stored store' && l.fields.slot === 7109344), JSON.stringify(second.logged));
  });

  /** The store a bootstrap alone makes (slot 7069376), as a record. */
  const bootstrapRecord = () => {
    const bootstrap = parseBootstrap(MAINNET, read('bootstrap.json'));
    return encodeStore(MAINNET, hexToBytes(CHECKPOINT, 32), initializeStore(MAINNET, hexToBytes(CHECKPOINT, 32), bootstrap));
  };
  const BOOTSTRAP_EXECUTION_NUMBER = Number(read('bootstrap.json').data.header.execution.block_number);

  /** A stored record set up by `setup`, then a start: it must be discarded (logged, why) and the checkpoint bootstrapped again. */
  const discarded = (name: string, setup: (store: Store) => Promise<void> | void, backendArgs: (url: string) => BeaconApiFinalityArgs, why: RegExp) => {
    test(name, async () => {
      // Only the bootstrap is served: the test is about what happens before the first update.
      const server = await startBeaconServer(new Map<string, Route>([[BOOTSTRAP_PATH, read('bootstrap.json')]]));
      servers.push(server);
      const { open } = tempStore();
      let store = open();
      await saveLightClientRecord(store, bootstrapRecord());
      await setup(store);
      await store.close();
      store = open();
      const again = await startOnce(store, backendArgs(server.url));
      await store.close();
      const warning = again.logged.find((l) => l.level === 'warn' && l.message.startsWith('discarding the stored light-client store'));
      assert.ok(warning, JSON.stringify(again.logged));
      assert.match(String(warning.fields.reason), why);
      assert.equal(bootstraps(server), 1, 'bootstrapped again');
      assert.ok(!again.logged.some((l) => l.message === 'light client resumed from its stored store'));
    });
  };

  test('a stored bootstrap-only store resumes too (the same start, without a discard)', async () => {
    const server = await startBeaconServer(new Map<string, Route>([[BOOTSTRAP_PATH, read('bootstrap.json')]]));
    servers.push(server);
    const { open } = tempStore();
    const store = open();
    await saveLightClientRecord(store, bootstrapRecord());
    const start = await startOnce(store, args(server.url));
    await store.close();
    assert.equal(bootstraps(server), 0);
    assert.ok(start.logged.some((l) => l.message === 'light client resumed from its stored store' && l.fields.slot === 7069376), JSON.stringify(start.logged));
  });

  discarded('a store bootstrapped from another checkpoint is discarded and the new checkpoint bootstraps', () => {}, (url) => {
    const other = `0x${'33'.repeat(32)}`;
    return args(url, other);
  }, /bootstrapped from checkpoint 0x5afc.*checkpoint_root is now 0x3333/);

  test('a store from another beacon chain is refused by the codec, naming both chains', () => {
    const record = bootstrapRecord();
    const otherChain = chainConfigFromData({ ...chainConfigToData(MAINNET), genesisValidatorsRoot: `0x${'44'.repeat(32)}` });
    assert.throws(() => restoreStore(otherChain, hexToBytes(CHECKPOINT, 32), record), (e: unknown) => e instanceof StoreRecordRejected && /another beacon chain.*0x4b363db9.*0x4444/.test(e.message));
    // The same record restores on its own chain, and a flipped byte in its execution header does not.
    assert.equal(restoreStore(MAINNET, hexToBytes(CHECKPOINT, 32), record).finalizedHeader.beacon.slot, 7069376);
    const tampered = structuredClone(record);
    const execution = tampered.finalizedHeader.execution!;
    execution[0] = execution[0]! ^ 1;
    assert.throws(() => restoreStore(MAINNET, hexToBytes(CHECKPOINT, 32), tampered), (e: unknown) => e instanceof StoreRecordRejected && /execution_branch/.test(e.message));
  });

  discarded('a stored store from another beacon chain is discarded at start', async (store) => {
    const record = loadLightClientRecord(store) as Record<string, unknown>;
    await saveLightClientRecord(store, { ...record, genesisValidatorsRoot: `0x${'44'.repeat(32)}` });
  }, (url) => args(url), /another beacon chain/);

  discarded('a stored store whose finalized execution block contradicts the stored canonical chain is discarded', async (store) => {
    await store.write(() => store.chain.canonical.put(u64Key(BOOTSTRAP_EXECUTION_NUMBER), Buffer.alloc(32, 0x55)));
  }, (url) => args(url), new RegExp(`finalized execution block ${BOOTSTRAP_EXECUTION_NUMBER} .* no longer links to the stored chain \\(canonical there: 0x5555`));

  discarded('a stored record that does not decode is discarded', async (store) => {
    const record = loadLightClientRecord(store) as Record<string, unknown>;
    await saveLightClientRecord(store, { ...record, currentSyncCommittee: Buffer.alloc(7) });
  }, (url) => args(url), /does not decode/);
});
