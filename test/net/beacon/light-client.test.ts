/**
 * The light-client sync protocol against recorded mainnet objects (helios testdata, Capella era):
 * the bootstrap against its block root, six period updates (862 → 867), the finality update and
 * its execution block hash — and one flipped byte in each part failing for the right reason.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURES } from '../../support/paths.js';
import { MAINNET, type BeaconChainConfig } from '../../../net/beacon/config.js';
import { LightClientError, type LightClientErrorCode } from '../../../net/beacon/errors.js';
import { parseBootstrap, parseFinalityUpdate, parseOptimisticUpdate, parseUpdate } from '../../../net/beacon/json.js';
import {
  beaconHeaderRoot, finalizedExecution, initializeStore, processFinalityUpdate, processOptimisticUpdate, processUpdate, validateFinalityUpdate, validateUpdate,
  type LightClientStore,
} from '../../../net/beacon/sync-protocol.js';
import { bytesToHex, hexToBytes } from '../../../net/eth/hex.js';
import { lightClientStatus } from '../../../net/beacon/p2p/peer-protocols.js';
import { encodeStore, restoreStore } from '../../../net/beacon/store-codec.js';

type Json = Record<string, any>;
const read = (file: string): Json => JSON.parse(readFileSync(join(FIXTURES, 'helios/beacon', file), 'utf8'));
const bootstrapJson = read('bootstrap.json');
const updatesJson = read('updates.json') as unknown as Json[];
const finalityJson = read('finality.json');
const optimisticJson = read('optimistic.json');
/** The mainnet block root at slot 7069376 (the bootstrap's block), as an operator would configure it. */
const CHECKPOINT = hexToBytes('0x5afc212a7924789b2bc86acad3ab3a6ffb1f6e97253ea50bee7f4f51422c9275', 32);
/** A clock well after every recorded object (slot 7109431 is the newest signature slot). */
const NOW_SLOT = 7_200_000;

/** A copy of `json` with one byte (the last one of a hex string) or the last digit (of a decimal string) changed at `path`. */
function flipped(json: Json, path: ReadonlyArray<string | number>): Json {
  const copy = structuredClone(json);
  let node: any = copy;
  for (const key of path.slice(0, -1)) node = node[key];
  const last = path[path.length - 1]!;
  const value = node[last] as string;
  if (value.startsWith('0x')) {
    const bytes = hexToBytes(value);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0x01;
    node[last] = bytesToHex(bytes);
  } else {
    node[last] = value.slice(0, -1) + String((Number(value.at(-1)) + 1) % 10);
  }
  return copy;
}

function rejects(fn: () => unknown, code: LightClientErrorCode): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof LightClientError, `expected a LightClientError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

/** Every string leaf of a JSON object with its path. */
function leaves(json: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof json === 'string') return [path];
  if (Array.isArray(json)) return json.flatMap((item, i) => leaves(item, [...path, i]));
  if (typeof json === 'object' && json !== null) return Object.entries(json).flatMap(([key, value]) => leaves(value, [...path, key]));
  return [];
}

// Parsed once: a committee's decoded keys are cached per parsed object, so stores built from these share them.
const bootstrap = parseBootstrap(MAINNET, bootstrapJson);
const updates = updatesJson.map((update) => parseUpdate(MAINNET, update));

function syncedStore(): LightClientStore {
  const store = initializeStore(MAINNET, CHECKPOINT, bootstrap);
  for (const update of updates) processUpdate(MAINNET, store, update, NOW_SLOT);
  return store;
}

describe('light-client bootstrap (mainnet slot 7069376)', () => {
  test('verifies against its block root: header root and current sync committee branch', () => {
    const bootstrap = parseBootstrap(MAINNET, bootstrapJson);
    assert.equal(bytesToHex(beaconHeaderRoot(bootstrap.header)), bytesToHex(CHECKPOINT));
    const store = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    assert.equal(store.finalizedHeader.beacon.slot, 7069376);
    assert.equal(store.nextSyncCommittee, null);
  });

  test('a flipped byte in the beacon header no longer matches the trusted root', () => {
    for (const field of ['parent_root', 'state_root', 'slot', 'proposer_index']) {
      rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'header', 'beacon', field]))), 'bootstrap_root_mismatch');
    }
    // The header is checked before its root: a changed body root first loses its execution proof.
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'header', 'beacon', 'body_root']))), 'invalid_header');
  });

  test('a flipped byte in the committee or its branch fails the current committee branch', () => {
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'current_sync_committee', 'pubkeys', 300]))), 'invalid_current_committee_branch');
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'current_sync_committee', 'aggregate_pubkey']))), 'invalid_current_committee_branch');
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'current_sync_committee_branch', 2]))), 'invalid_current_committee_branch');
  });

  test('a flipped byte in the execution header or its branch fails the execution branch', () => {
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'header', 'execution', 'block_hash']))), 'invalid_header');
    rejects(() => initializeStore(MAINNET, CHECKPOINT, parseBootstrap(MAINNET, flipped(bootstrapJson, ['data', 'header', 'execution_branch', 0]))), 'invalid_header');
  });

  test('malformed input is refused naming the field', () => {
    const copy = structuredClone(bootstrapJson);
    copy.data.current_sync_committee_branch[1] = '0x1234';
    assert.throws(() => parseBootstrap(MAINNET, copy), /malformed: bootstrap.current_sync_committee_branch\[1\]/);
  });
});

describe('light-client updates (periods 862 → 867) and the finality update', () => {
  let store: LightClientStore;
  before(() => {
    store = syncedStore();
  });

  test('each period update is signed by the known committee and advances the finalized header', () => {
    const fresh = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    const finalizedSlots = updates.map((update) => {
      processUpdate(MAINNET, fresh, update, NOW_SLOT);
      return fresh.finalizedHeader.beacon.slot;
    });
    // The first update (same period as the bootstrap) brings the next committee; each later one finalizes its header.
    assert.deepEqual(finalizedSlots, [7069376, 7070047, 7078240, 7089280, 7094272, 7104096]);
    assert.notEqual(fresh.nextSyncCommittee, null);
  });

  test('the finalized checkpoint epoch is the one the finality branch proves, not the epoch of the header slot', () => {
    const fresh = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    const proven = updates.map((update) => {
      processUpdate(MAINNET, fresh, update, NOW_SLOT);
      return [fresh.finalizedHeader.beacon.slot, fresh.finalizedEpoch ?? null];
    });
    // Slot 7070047 is the last slot of epoch 220938; it was finalized as the checkpoint of epoch 220939, whose first
    // slot (7070048) had no block. The other finalized headers sit on their epoch's first slot (slot / 32).
    assert.deepEqual(proven, [[7069376, null], [7070047, 220939], [7078240, 221195], [7089280, 221540], [7094272, 221696], [7104096, 222003]]);
    const afterEmptySlot = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    for (const update of updates.slice(0, 2)) processUpdate(MAINNET, afterEmptySlot, update, NOW_SLOT);
    assert.equal(lightClientStatus(MAINNET, afterEmptySlot, CHECKPOINT, 7069376).finalizedEpoch, 220939, 'the Status announces the proven epoch');
    // Kept across restarts; a record without it (written before it was kept) falls back to the slot's epoch.
    const record = encodeStore(MAINNET, CHECKPOINT, afterEmptySlot);
    assert.equal(restoreStore(MAINNET, CHECKPOINT, record).finalizedEpoch, 220939);
    assert.equal(restoreStore(MAINNET, CHECKPOINT, { ...record, finalizedEpoch: undefined }).finalizedEpoch, null);
    assert.equal(restoreStore(MAINNET, CHECKPOINT, { ...record, finalizedEpoch: 5 }).finalizedEpoch, null, 'an epoch below the header\'s own is not believed');
    // The epoch leaf is part of the proof: changing it breaks the finality branch.
    const tampered = structuredClone(updatesJson[1]!);
    const data = tampered.data ?? tampered;
    data.finality_branch[0] = `0x0c5f03${'00'.repeat(29)}`;
    const start = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    processUpdate(MAINNET, start, updates[0]!, NOW_SLOT);
    assert.throws(() => validateUpdate(MAINNET, start, parseUpdate(MAINNET, tampered), NOW_SLOT), (error: unknown) => error instanceof LightClientError && error.code === 'invalid_finality_branch');
  });

  test('the finality update finalizes slot 7109344 and proves its execution block hash', () => {
    const local = syncedStore();
    const outcome = processFinalityUpdate(MAINNET, local, parseFinalityUpdate(MAINNET, finalityJson), NOW_SLOT);
    assert.equal(outcome.finalizedAdvanced, true);
    const execution = finalizedExecution(local);
    assert.ok(execution);
    assert.equal(execution.slot, Number(finalityJson.data.finalized_header.beacon.slot));
    assert.equal(execution.number, Number(finalityJson.data.finalized_header.execution.block_number));
    assert.equal(bytesToHex(execution.hash), finalityJson.data.finalized_header.execution.block_hash);
    // The optimistic update is signed by the same committee; it moves no finality.
    assert.equal(processOptimisticUpdate(MAINNET, local, parseOptimisticUpdate(MAINNET, optimisticJson), NOW_SLOT).finalizedAdvanced, false);
    assert.equal(local.optimisticHeader.beacon.slot, Number(optimisticJson.data.attested_header.beacon.slot));
  });

  test('one flipped byte anywhere in the finality update (except the untrusted signature slot) is rejected', () => {
    const checked = new Map<string, number>();
    for (const path of leaves(finalityJson.data)) {
      if (path[0] === 'signature_slot') continue;
      const update = flipped(finalityJson, ['data', ...path]);
      assert.throws(() => validateFinalityUpdate(MAINNET, store, parseFinalityUpdate(MAINNET, update), NOW_SLOT), (error: unknown) => {
        assert.ok(error instanceof LightClientError, `${path.join('.')}: ${String(error)}`);
        checked.set(error.code, (checked.get(error.code) ?? 0) + 1);
        return true;
      }, `flipping ${path.join('.')} was accepted`);
    }
    assert.ok(checked.get('invalid_signature')! > 0 && checked.get('invalid_finality_branch')! > 0 && checked.get('invalid_header')! > 0, JSON.stringify([...checked]));
  });

  test('each part of the finality update fails for its own reason', () => {
    const check = (path: Array<string | number>, code: LightClientErrorCode) =>
      rejects(() => validateFinalityUpdate(MAINNET, store, parseFinalityUpdate(MAINNET, flipped(finalityJson, ['data', ...path])), NOW_SLOT), code);
    check(['sync_aggregate', 'sync_committee_signature'], 'invalid_signature');
    check(['sync_aggregate', 'sync_committee_bits'], 'invalid_signature');
    check(['attested_header', 'beacon', 'parent_root'], 'invalid_signature');
    check(['attested_header', 'beacon', 'state_root'], 'invalid_finality_branch');
    check(['finality_branch', 3], 'invalid_finality_branch');
    check(['finalized_header', 'beacon', 'state_root'], 'invalid_finality_branch');
    check(['finalized_header', 'execution', 'block_hash'], 'invalid_header');
    check(['finalized_header', 'execution', 'block_number'], 'invalid_header');
    check(['finalized_header', 'execution_branch', 1], 'invalid_header');
    check(['attested_header', 'execution', 'state_root'], 'invalid_header');
  });

  test('a wrong fork version or genesis validators root breaks the signature domain', () => {
    const update = parseFinalityUpdate(MAINNET, finalityJson);
    const otherFork: BeaconChainConfig = { ...MAINNET, forks: MAINNET.forks.map((f) => (f.name === 'capella' ? { ...f, version: hexToBytes('0x03000001') } : f)) };
    rejects(() => validateFinalityUpdate(otherFork, store, update, NOW_SLOT), 'invalid_signature');
    const otherGenesis: BeaconChainConfig = { ...MAINNET, genesisValidatorsRoot: new Uint8Array(32) };
    rejects(() => validateFinalityUpdate(otherGenesis, store, update, NOW_SLOT), 'invalid_signature');
  });

  test('a signature slot from the future or not after the attested slot is refused', () => {
    const update = parseFinalityUpdate(MAINNET, finalityJson);
    rejects(() => validateFinalityUpdate(MAINNET, store, update, update.signatureSlot - 1), 'invalid_slot_order');
    rejects(() => validateFinalityUpdate(MAINNET, store, { ...update, signatureSlot: update.attestedHeader.beacon.slot }, NOW_SLOT), 'invalid_slot_order');
  });

  test('a sync-committee update: flipped next committee, its branch, or its signature fail for their reasons', () => {
    const fresh = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    const first = updatesJson[0]!;
    const check = (path: Array<string | number>, code: LightClientErrorCode) =>
      rejects(() => validateUpdate(MAINNET, fresh, parseUpdate(MAINNET, flipped(first, ['data', ...path])), NOW_SLOT), code);
    check(['next_sync_committee', 'pubkeys', 5], 'invalid_next_committee_branch');
    check(['next_sync_committee', 'aggregate_pubkey'], 'invalid_next_committee_branch');
    check(['next_sync_committee_branch', 4], 'invalid_next_committee_branch');
    check(['finality_branch', 0], 'invalid_finality_branch');
    check(['sync_aggregate', 'sync_committee_signature'], 'invalid_signature');
    check(['attested_header', 'execution_branch', 2], 'invalid_header');
    validateUpdate(MAINNET, fresh, parseUpdate(MAINNET, first), NOW_SLOT);
  });

  test('an update that skips a period cannot be followed', () => {
    const fresh = initializeStore(MAINNET, CHECKPOINT, bootstrap);
    rejects(() => validateUpdate(MAINNET, fresh, parseUpdate(MAINNET, updatesJson[2]), NOW_SLOT), 'period_not_followable');
    rejects(() => validateFinalityUpdate(MAINNET, fresh, parseFinalityUpdate(MAINNET, finalityJson), NOW_SLOT), 'period_not_followable');
  });
});
