import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { parseReceiptsInput, receiptsJsonFor } from '../../../actors/import/receipts-file.js';
import { ReceiptsFileError } from '../../../actors/import/errors.js';
import { FIXTURES } from '../../support/paths.js';
import { IoFormatError, parseIoCase, readIoCases, shapeDifference } from './io-cases.js';
import { receiptsFromCases } from './receipts-from-cases.js';

test('an .io case parses into its description, speconly flag and request/response exchanges', () => {
  const parsed = parseIoCase('eth_x/case', '// does a thing\n// speconly\n>> {"jsonrpc":"2.0","id":1,"method":"eth_x","params":[1]}\n<< {"jsonrpc":"2.0","id":1,"result":"0x1"}\n');
  assert.equal(parsed.method, 'eth_x');
  assert.equal(parsed.description, 'does a thing');
  assert.equal(parsed.specOnly, true);
  assert.deepEqual(parsed.exchanges, [{ request: { jsonrpc: '2.0', id: 1, method: 'eth_x', params: [1] }, response: { jsonrpc: '2.0', id: 1, result: '0x1' } }]);
  assert.throws(() => parseIoCase('a/b', '<< {"id":1,"result":1}'), IoFormatError);
  assert.throws(() => parseIoCase('a/b', '>> {"method":"m"}'), /the last request has no response/);
  assert.throws(() => parseIoCase('a/b', '>> {"method":"m"}\n<< {"id":1}'), /neither result nor error/);
  assert.throws(() => parseIoCase('a/b', 'junk'), /expected a \/\/, >> or << line/);
});

test('every case of the execution-apis fixtures parses, one exchange each', () => {
  const cases = readIoCases(join(FIXTURES, 'execution-apis'));
  assert.equal(cases.length, 54);
  for (const ioCase of cases) {
    assert.ok(ioCase.exchanges.length >= 1);
    for (const { request } of ioCase.exchanges) assert.equal(request.method, ioCase.method, ioCase.name);
  }
});

test('shape comparison ignores values but not keys or JSON types', () => {
  assert.equal(shapeDifference({ a: '0x1', b: [{ c: 1 }] }, { a: '0x2', b: [{ c: 2 }, { c: 3 }] }), null);
  assert.equal(shapeDifference({ a: '0x1' }, { a: 1 }), '$.a: expected string, got number');
  assert.equal(shapeDifference({ a: '0x1' }, { a: '0x1', b: 1 }), '$: keys differ (missing -; extra b)');
  assert.equal(shapeDifference([{ a: 1 }], [{ a: 1 }, { b: 1 }]), '$[1]: keys differ (missing a; extra b)');
});

test('receipts are kept only for blocks the recorded responses cover wholly', () => {
  const receipt = (block: string, index: number) => ({ blockHash: block, transactionIndex: `0x${index.toString(16)}` });
  const cases = [
    parseIoCase('eth_getBlockReceipts/a', `>> {"method":"eth_getBlockReceipts"}\n<< ${JSON.stringify({ result: [receipt('0xaa', 0), receipt('0xaa', 1)] })}`),
    parseIoCase('eth_getTransactionReceipt/b', `>> {"method":"eth_getTransactionReceipt"}\n<< ${JSON.stringify({ result: receipt('0xbb', 1) })}`),
    parseIoCase('eth_getTransactionReceipt/c', `>> {"method":"eth_getTransactionReceipt"}\n<< ${JSON.stringify({ result: receipt('0xcc', 0) })}`),
  ];
  const built = receiptsFromCases(cases, new Map([['0xaa', 2], ['0xbb', 2], ['0xcc', 1]]));
  assert.deepEqual(Object.keys(built.complete).sort(), ['0xaa', '0xcc']);
  assert.deepEqual(built.partial, { '0xbb': { have: 1, transactions: 2 } });
});

test('the receipts input names blocks by hash or number, and refuses anything else', () => {
  const hash = `0x${'ab'.repeat(32)}` as const;
  const input = parseReceiptsInput({ [hash.toUpperCase().replace('0X', '0x')]: [], '7': [], '0x8': [] });
  assert.equal(input.size, 3);
  assert.deepEqual(receiptsJsonFor(input, 1, hash), []);
  assert.deepEqual(receiptsJsonFor(input, 8, `0x${'cd'.repeat(32)}`), []);
  assert.equal(receiptsJsonFor(input, 9, `0x${'cd'.repeat(32)}`), undefined);
  assert.equal(parseReceiptsInput([[{ blockHash: hash }]]).byHash.size, 1);
  assert.throws(() => parseReceiptsInput({ x: [] }), ReceiptsFileError);
  assert.throws(() => parseReceiptsInput({ 7: {} }), /is not an array of receipts/);
  assert.throws(() => parseReceiptsInput([[]]), /must be a non-empty eth_getBlockReceipts result/);
  assert.throws(() => parseReceiptsInput('x'), /expected an object keyed by block hash or number/);
  assert.throws(() => receiptsJsonFor(parseReceiptsInput({ [hash]: [], 7: [] }), 7, hash), /both by hash and by number/);
});
