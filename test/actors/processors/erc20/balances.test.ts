/**
 * The erc20 balance row codec: compact stored rows decode to the served row (JSON identical to the
 * JSON rows earlier versions stored), signed balances of any size round-trip, rows stored as JSON by
 * an earlier version are still read and re-marked, and an unknown format is refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { balanceKey, decodeRow, encodeRow, finalizedRow, restoredChange, rowJson, rowMeta, storedBalance, type BalanceRow } from '../../../../actors/processors/erc20/balances.js';

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
        const row = decodeRow(KEY, bytes);
        assert.deepEqual(row, { token: TOKEN, address: HOLDER, balance: balance.toString(), lastChange: LAST, finality });
        assert.deepEqual(rowMeta(bytes), { lastChange: LAST, finality });
      }
    }
  });

  it('serves the same JSON an earlier version stored, and still reads and re-marks those JSON rows', () => {
    const row: BalanceRow = { token: TOKEN, address: HOLDER, balance: '-42', lastChange: LAST, finality: 'included' };
    const legacy = Buffer.from(JSON.stringify({ token: row.token, address: row.address, balance: row.balance, lastChange: row.lastChange, finality: row.finality }));
    const compact = encodeRow({ balance: -42n, lastChange: LAST, finality: 'included' });
    assert.ok(compact.length < legacy.length / 3, `${compact.length} bytes against ${legacy.length}`);
    assert.equal(rowJson(decodeRow(KEY, compact)), legacy.toString('utf8'));
    assert.deepEqual(decodeRow(KEY, legacy), row);
    assert.equal(storedBalance(legacy), -42n);
    assert.equal(restoredChange(KEY, compact).dataJson, restoredChange(KEY, legacy).dataJson);
    for (const stored of [compact, legacy]) {
      assert.equal(finalizedRow(stored, LAST.blockNumber - 1), null, 'a change above the finalized block stays included');
      const marked = finalizedRow(stored, LAST.blockNumber)!;
      assert.deepEqual(decodeRow(KEY, marked), { ...row, finality: 'finalized' });
      assert.equal(finalizedRow(marked, LAST.blockNumber + 5), null, 'already finalized');
    }
    assert.equal(finalizedRow(legacy, LAST.blockNumber)![0], 0x7b, 'a JSON row stays JSON');
  });

  it('refuses a row of an unknown format instead of misreading it', () => {
    const unknown = Buffer.from(encodeRow({ balance: 5n, lastChange: LAST, finality: 'included' }));
    unknown[0] = 0x09;
    assert.throws(() => rowMeta(unknown), /unknown format 9/);
    const badFinality = Buffer.from(encodeRow({ balance: 5n, lastChange: LAST, finality: 'included' }));
    badFinality[1] = 7;
    assert.throws(() => rowMeta(badFinality), /unknown finality code 7/);
  });
});
