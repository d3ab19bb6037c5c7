import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSavepoint, encodeSavepoint, SavepointArchiveError, type SavepointHeader } from '../../store/savepoints.js';

const HEADER: SavepointHeader = {
  format: 1, id: 'sp', chainId: 1337, genesisHash: `0x${'11'.repeat(32)}`,
  processor: { id: 'erc20', instance: 'erc20', kind: 'erc20', version: '1.0.0', changeSchema: 'erc20.v1', options: { tokens: '*' } },
  block: { number: 40, hash: `0x${'22'.repeat(32)}` }, stateFrom: 1, rowCount: 3, createdAt: '2026-11-24T00:00:00.000Z',
};
const ROWS: Array<[Buffer, Buffer]> = [[Buffer.from('01aa', 'hex'), Buffer.from('{"a":1}')], [Buffer.from('01bb', 'hex'), Buffer.alloc(0)], [Buffer.alloc(41, 7), Buffer.alloc(70_000, 9)]];

test('a savepoint archive round-trips its header and rows byte for byte', () => {
  const archive = encodeSavepoint(HEADER, ROWS);
  assert.equal(archive.subarray(0, 8).toString('latin1'), 'CDNSAVEP');
  assert.equal(archive.readUInt16BE(8), 1, 'format version');
  const { header, rows } = decodeSavepoint(archive);
  assert.deepEqual(header, HEADER);
  assert.deepEqual(rows, ROWS);
});

test('a damaged, truncated, foreign or future-format archive is refused naming why', () => {
  const archive = encodeSavepoint(HEADER, ROWS);
  const refuse = (bytes: Buffer, reason: RegExp) => assert.throws(() => decodeSavepoint(bytes), (error: Error) => error instanceof SavepointArchiveError && reason.test(error.message));
  for (const at of [20, 200, archive.length - 40, archive.length - 1]) {
    const flipped = Buffer.from(archive);
    flipped[at] = flipped[at]! ^ 1;
    refuse(flipped, /checksum mismatch/);
  }
  refuse(archive.subarray(0, archive.length - 10), /checksum mismatch/);
  refuse(Buffer.from('not a savepoint at all, just some text that is long enough'), /bad magic/);
  const future = Buffer.from(archive);
  future.writeUInt16BE(2, 8);
  refuse(future, /format 2 is not supported/);
  refuse(encodeSavepoint({ ...HEADER, rowCount: 4 }, ROWS), /holds 3 rows, its header says 4/);
});
