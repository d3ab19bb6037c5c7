/**
 * The erc20 balance row codec: compact stored rows decode to the served row (JSON identical to the
 * JSON rows earlier versions stored), signed balances of any size round-trip, rows stored as JSON by
 * an earlier version are still read, finality is derived from the instance's finalized block where a
 * row is served, and an unknown format is refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { balanceKey, decodeRow, encodeRow, reduceBalances, restoredChange, rowJson, rowMeta, servedFinality, storedBalance, type BalanceRow } from '../../../../actors/kinds/erc20/balances.js';
import type { StateApi } from '../../../../actors/kinds/sdk/state.js';

const TOKEN = '0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506';
const HOLDER = '0x12ba2fbdd0cf2aec49bfd8ce7e9577a28c3077fd';
const KEY = balanceKey(TOKEN, HOLDER);
const LAST = { blockNumber: 1_234_567, blockHash: `0x${'ab'.repeat(31)}01`, timestamp: 1_700_000_123 };

describe('erc20 balance rows', () => {
  it('round-trips signed balances from zero-adjacent to 2^256 and beyond, with block and finality', () => {
    for (const balance of [1n, -1n, 255n, 256n, -65_536n, 10n ** 18n, 2n ** 256n - 1n, -(2n ** 256n), 2n ** 300n]) {
      for (const finality of ['preview', 'included', 'finalized'] as const) {
        const bytes = encodeRow({ balance, lastChange: LAST, finality });
        assert.equal(storedBalance(bytes), balance);
        const row = decodeRow(KEY, bytes, null);
        assert.deepEqual(row, { token: TOKEN, address: HOLDER, balance: balance.toString(), lastChange: LAST, finality });
        assert.deepEqual(rowMeta(bytes, null), { lastChange: LAST, finality });
      }
    }
  });

  it('serves a row finalized when its block is at or below the finalized block, as stored otherwise (a row marked finalized by an earlier version stays so)', () => {
    for (const stored of ['preview', 'included', 'finalized'] as const) {
      const bytes = encodeRow({ balance: 9n, lastChange: LAST, finality: stored });
      const legacy = Buffer.from(rowJson({ token: TOKEN, address: HOLDER, balance: '9', lastChange: LAST, finality: stored }));
      for (const [finalizedNumber, expected] of [[null, stored], [0, stored], [LAST.blockNumber - 1, stored], [LAST.blockNumber, 'finalized'], [LAST.blockNumber + 64, 'finalized']] as const) {
        const finality = stored === 'finalized' ? 'finalized' : expected;
        assert.equal(servedFinality(stored, LAST.blockNumber, finalizedNumber), finality);
        for (const row of [bytes, legacy]) {
          assert.equal(rowMeta(row, finalizedNumber).finality, finality, `${stored} through ${finalizedNumber}`);
          assert.equal(decodeRow(KEY, row, finalizedNumber).finality, finality);
          assert.equal(restoredChange(KEY, row, finalizedNumber).dataJson, rowJson({ token: TOKEN, address: HOLDER, balance: '9', lastChange: LAST, finality }));
        }
      }
    }
  });

  it('serves the same JSON an earlier version stored, and still reads those JSON rows', () => {
    const row: BalanceRow = { token: TOKEN, address: HOLDER, balance: '-42', lastChange: LAST, finality: 'included' };
    const legacy = Buffer.from(JSON.stringify({ token: row.token, address: row.address, balance: row.balance, lastChange: row.lastChange, finality: row.finality }));
    const compact = encodeRow({ balance: -42n, lastChange: LAST, finality: 'included' });
    assert.ok(compact.length < legacy.length / 3, `${compact.length} bytes against ${legacy.length}`);
    assert.equal(rowJson(decodeRow(KEY, compact, null)), legacy.toString('utf8'));
    assert.deepEqual(decodeRow(KEY, legacy, null), row);
    assert.equal(storedBalance(legacy), -42n);
    assert.equal(restoredChange(KEY, compact, null).dataJson, restoredChange(KEY, legacy, null).dataJson);
    assert.equal(restoredChange(KEY, compact, LAST.blockNumber).dataJson, rowJson({ ...row, finality: 'finalized' }));
    assert.equal(restoredChange(KEY, legacy, LAST.blockNumber).dataJson, rowJson({ ...row, finality: 'finalized' }));
  });

  it('reduce writes the rows encodeRow writes and publishes the JSON rowJson renders (its own concatenation of both)', () => {
    const rows = new Map<string, Buffer>();
    const state: StateApi = { get: (key) => rows.get(key.toString('hex')), put: (key, value) => rows.set(key.toString('hex'), value), remove: (key) => rows.delete(key.toString('hex')) };
    const other = '0x00000000000000000000000000000000000000ff';
    rows.set(balanceKey(TOKEN, other).toString('hex'), encodeRow({ balance: 7n, lastChange: LAST, finality: 'finalized' }));
    const block = { number: LAST.blockNumber + 1, hash: `0x${'cd'.repeat(32)}` as const, timestamp: LAST.timestamp + 12, finality: 'included' as const };
    const lastChange = { blockNumber: block.number, blockHash: block.hash, timestamp: block.timestamp };
    for (const delta of [1n, -1n, 255n, 256n, 2n ** 256n - 1n, -(2n ** 300n)]) {
      rows.clear();
      const changes = reduceBalances(state, new Map([[`${TOKEN}${HOLDER.slice(2)}`, delta]]), block);
      const stored = rows.get(KEY.toString('hex'))!;
      assert.deepEqual(stored, encodeRow({ balance: delta, lastChange, finality: 'included' }));
      assert.deepEqual(changes, [{ kind: 'erc20.balance.put', key: KEY.toString('hex'), dataJson: rowJson({ token: TOKEN, address: HOLDER, balance: delta.toString(), lastChange, finality: 'included' }) }]);
    }
    rows.set(balanceKey(TOKEN, other).toString('hex'), encodeRow({ balance: 7n, lastChange: LAST, finality: 'finalized' }));
    // A finalized block (cold backfill, or a block at or below the finalized one): the change says so; the row is stored as any other.
    rows.clear();
    const [finalChange] = reduceBalances(state, new Map([[`${TOKEN}${HOLDER.slice(2)}`, 5n]]), { ...block, finality: 'finalized' });
    assert.deepEqual(rows.get(KEY.toString('hex')), encodeRow({ balance: 5n, lastChange, finality: 'included' }), 'the stored finality is derived where served');
    assert.equal(finalChange!.dataJson, rowJson({ token: TOKEN, address: HOLDER, balance: '5', lastChange, finality: 'finalized' }));
    rows.set(balanceKey(TOKEN, other).toString('hex'), encodeRow({ balance: 7n, lastChange: LAST, finality: 'finalized' }));
    const [gone] = reduceBalances(state, new Map([[`${TOKEN}${other.slice(2)}`, -7n]]), block);
    assert.equal(rows.has(balanceKey(TOKEN, other).toString('hex')), false);
    assert.deepEqual(gone, { kind: 'erc20.balance.delete', key: balanceKey(TOKEN, other).toString('hex'), dataJson: JSON.stringify({ token: TOKEN, address: other, lastChange }) });
  });

  it('refuses a row of an unknown format instead of misreading it', () => {
    const unknown = Buffer.from(encodeRow({ balance: 5n, lastChange: LAST, finality: 'included' }));
    unknown[0] = 0x09;
    assert.throws(() => rowMeta(unknown, null), /unknown format 9/);
    const badFinality = Buffer.from(encodeRow({ balance: 5n, lastChange: LAST, finality: 'included' }));
    badFinality[1] = 7;
    assert.throws(() => rowMeta(badFinality, null), /unknown finality code 7/);
    assert.throws(() => rowMeta(badFinality, LAST.blockNumber), /unknown finality code 7/);
  });
});
