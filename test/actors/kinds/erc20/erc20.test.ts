import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak_256 } from '@noble/hashes/sha3.js';
import erc20 from '../../../../actors/kinds/erc20/index.js';
import { balanceKey, BALANCE_KEY_PREFIX, decodeRow, keyParts } from '../../../../actors/kinds/erc20/balances.js';
import { transferDeltas } from '../../../../actors/kinds/erc20/transfers.js';
import { erc20Options } from '../../../../actors/kinds/erc20/options.js';
import type { BlockInput, KindContext } from '../../../../actors/kinds/sdk/kind.js';
import type { ProcessorTables } from '../../../../store/store.js';
import { closeTempStore, createTempStore } from '../../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, mainnetFixtureBlocks, type FixtureBlock } from '../blobs/support.js';

/** The Transfer signature, hashed here rather than taken from the kind. */
const TRANSFER = `0x${Buffer.from(keccak_256(new TextEncoder().encode('Transfer(address,address,uint256)'))).toString('hex')}`;

const ZERO = `0x${'00'.repeat(20)}`;

/** Independent reference: every Transfer log of the receipts, summed per token|holder (zeros dropped); the zero address is no holder (mints credit, burns debit, one side only). */
function referenceSums(blocks: readonly FixtureBlock[]): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  const bump = (key: string, amount: bigint) => sums.set(key, (sums.get(key) ?? 0n) + amount);
  for (const block of blocks) {
    for (const receipt of block.receipts) {
      for (const log of receipt.logs) {
        if (log.topics[0] !== TRANSFER || log.topics.length !== 3) continue;
        const data = Buffer.from(log.data.slice(2), 'hex');
        if (data.length !== 32) continue;
        const amount = BigInt(`0x${data.toString('hex') || '0'}`);
        const from = `0x${Buffer.from(log.topics[1]!.slice(2), 'hex').subarray(12).toString('hex')}`;
        const to = `0x${Buffer.from(log.topics[2]!.slice(2), 'hex').subarray(12).toString('hex')}`;
        if (from !== ZERO) bump(`${log.address.toLowerCase()}|${from}`, -amount);
        if (to !== ZERO) bump(`${log.address.toLowerCase()}|${to}`, amount);
      }
    }
  }
  for (const [key, value] of sums) if (value === 0n) sums.delete(key);
  return sums;
}

function input(block: FixtureBlock): BlockInput {
  return { number: block.number, hash: block.hash, header: block.header, transactions: [], receipts: block.receipts, sizeBytes: block.sizeBytes, parentTimestamp: null };
}

function storedBalances(tables: ProcessorTables): Map<string, bigint> {
  const rows = new Map<string, bigint>();
  for (const { key, value } of tables.entities.getRange({ start: Buffer.of(BALANCE_KEY_PREFIX), end: Buffer.of(BALANCE_KEY_PREFIX + 1) })) {
    const { token, address } = keyParts(key);
    const row = decodeRow(key, value, null);
    assert.equal(row.token, token);
    assert.equal(row.address, address);
    rows.set(`${token}|${address}`, BigInt(row.balance));
  }
  return rows;
}

function context(tables: ProcessorTables): KindContext {
  // erc20 reads neither schedule nor genesis.
  return { tables, network: 'mainnet', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } };
}

test('map nets every Transfer log of the mainnet fixture blocks exactly as an independent sum over the receipts', () => {
  const blocks = mainnetFixtureBlocks();
  const options = erc20Options({ tokens: '*' });
  let transfers = 0;
  for (const block of blocks) {
    const fromKind = new Map([...transferDeltas(input(block), options)].map(([key, value]) => [`${key.slice(0, 42)}|0x${key.slice(42)}`, value]));
    assert.deepEqual(fromKind, referenceSums([block]), `block ${block.number}`);
    transfers += block.receipts.reduce((n, r) => n + r.logs.filter((l) => l.topics[0] === TRANSFER).length, 0);
  }
  assert.ok(transfers > 500, `the fixtures hold many Transfer logs (${transfers})`);
});

test('a token list keeps only those tokens', () => {
  const block = mainnetFixtureBlocks()[0]!;
  const all = referenceSums([block]);
  const token = [...all.keys()][0]!.split('|')[0]!;
  const options = erc20Options({ tokens: [{ address: token.toUpperCase().replace('0X', '0x'), deployed_at: 1 }] });
  const deltas = transferDeltas(input(block), options);
  assert.ok(deltas.size > 0);
  for (const key of deltas.keys()) assert.equal(key.slice(0, 42), token);
  assert.equal(deltas.size, [...all.keys()].filter((k) => k.startsWith(`${token}|`)).length);
});

test('reduce folds the blocks into balances equal to the reference; undo restores each earlier state exactly, down to empty', async (t) => {
  const temp = createTempStore('cdn-erc20-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('erc20@test');
  const ctx = context(tables);
  const kind = erc20.bind({ tokens: '*' });
  const blocks = mainnetFixtureBlocks();
  const snapshots: Array<Map<string, Buffer>> = [];
  const rawRows = () => new Map([...tables.entities.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value)]));
  for (const [i, block] of blocks.entries()) {
    snapshots.push(rawRows());
    const changes = await temp.store.write(() => kind.apply(ctx, input(block), 'included'));
    assert.equal(changes.length, referenceSums([block]).size, `one change per holder touched in block ${block.number}`);
    assert.deepEqual(storedBalances(tables), referenceSums(blocks.slice(0, i + 1)), `after block ${block.number}`);
  }
  for (let i = blocks.length - 1; i >= 0; i -= 1) {
    const block = blocks[i]!;
    const changes = await temp.store.write(() => kind.undo(ctx, block.number, block.hash, null));
    assert.equal(changes.length, referenceSums([block]).size, `undo of ${block.number} publishes one change per restored holder`);
    assert.deepEqual(rawRows(), snapshots[i], `undo of ${block.number} restores the rows byte for byte`);
  }
  assert.equal([...tables.undo.getRange({})].length, 0, 'no inverse is left');
});

test('finalize drops the inverses of final blocks and rewrites no row: a row is served finalized when its block is at or below the finalized one', async (t) => {
  const temp = createTempStore('cdn-erc20-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('erc20@test');
  const ctx = context(tables);
  const kind = erc20.bind({ tokens: '*' });
  const [first, second] = mainnetFixtureBlocks();
  await temp.store.write(() => kind.apply(ctx, input(first!), 'included'));
  await temp.store.write(() => kind.apply(ctx, input(second!), 'included'));
  const before = [...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`);
  await temp.store.write(() => kind.finalize(ctx, 0, first!.number));
  for (const { key } of tables.undo.getRange({})) assert.equal(Number(Buffer.from(key).readBigUInt64BE(0)), second!.number, 'only the unfinalized block keeps inverses');
  assert.deepEqual([...tables.entities.getRange({})].map(({ key, value }) => `${Buffer.from(key).toString('hex')}=${Buffer.from(value).toString('hex')}`), before, 'no row rewritten');
  const served = new Set<string>();
  for (const { key, value } of tables.entities.getRange({ start: Buffer.of(BALANCE_KEY_PREFIX), end: Buffer.of(BALANCE_KEY_PREFIX + 1) })) {
    const row = decodeRow(Buffer.from(key), Buffer.from(value), first!.number);
    assert.equal(row.finality, row.lastChange.blockNumber <= first!.number ? 'finalized' : 'included');
    served.add(row.finality);
  }
  assert.deepEqual([...served].sort(), ['finalized', 'included'], 'both blocks left rows');
});

test('undo below a finalized block restores rows marked finalized, as their last change now is', async (t) => {
  const temp = createTempStore('cdn-erc20-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('erc20@test');
  const ctx = context(tables);
  const kind = erc20.bind({ tokens: '*' });
  const [first, second] = mainnetFixtureBlocks();
  await temp.store.write(() => kind.apply(ctx, input(first!), 'included'));
  await temp.store.write(() => kind.apply(ctx, input(second!), 'included'));
  await temp.store.write(() => kind.finalize(ctx, 0, first!.number));
  const changes = await temp.store.write(() => kind.undo(ctx, second!.number, second!.hash, first!.number));
  const restored = changes.filter((c) => c.kind === 'erc20.balance.put').map((c) => JSON.parse(c.dataJson) as { lastChange: { blockNumber: number }; finality: string });
  assert.ok(restored.length > 0, 'the two blocks share holders');
  for (const row of restored) assert.deepEqual([row.lastChange.blockNumber, row.finality], [first!.number, 'finalized']);
  assert.deepEqual(storedBalances(tables), referenceSums([first!]));
});

test('the devnet chain: balances of its tokens equal the independent sum over its receipts', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-erc20-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('erc20@devnet');
  const kind = erc20.bind({ tokens: '*' });
  const blocks: FixtureBlock[] = chain.blocks.map((b) => ({ number: b.block.header.number, header: b.block.header, hash: b.hash, body: b.block, receipts: b.receipts, sizeBytes: 0 }));
  await temp.store.write(() => { for (const block of blocks) kind.apply(context(tables), input(block), 'included'); });
  const reference = referenceSums(blocks);
  assert.ok(reference.size > 10, 'the devnet moves tokens');
  assert.deepEqual(storedBalances(tables), reference);
  for (const token of new Set([...reference.keys()].map((key) => key.split('|')[0]!))) {
    assert.equal(tables.entities.get(balanceKey(token, ZERO)), undefined, `the zero address holds no ${token} balance (mints are not debited from it)`);
  }
  for (const [key, balance] of storedBalances(tables)) assert.ok(balance > 0n, `${key}: a balance computed from genesis is never negative (${balance})`);
});

test('mints credit only the recipient and burns debit only the sender: the zero address is never a holder', () => {
  const token = `0x${'ab'.repeat(20)}`;
  const topic = (address: string) => `0x${'00'.repeat(12)}${address.slice(2)}`;
  const alice = `0x${'a1'.repeat(20)}`;
  const transfer = (from: string, to: string, value: bigint) => ({ address: token, topics: [TRANSFER, topic(from), topic(to)], data: `0x${value.toString(16).padStart(64, '0')}` });
  const block = {
    number: 5, hash: `0x${'05'.repeat(32)}`, header: { timestamp: 1000 }, transactions: [], sizeBytes: 0, parentTimestamp: null,
    receipts: [{ logs: [transfer(ZERO, alice, 100n), transfer(alice, ZERO, 30n)] }],
  } as unknown as BlockInput;
  const deltas = transferDeltas(block, erc20Options({ tokens: '*' }));
  assert.deepEqual([...deltas], [[`${token}${alice.slice(2)}`, 70n]]);
});

test('options are validated: tokens required, addresses checked, unknown keys refused', () => {
  assert.throws(() => erc20.bind({}), /tokens/);
  assert.throws(() => erc20.bind({ tokens: ['0x12'] }), /20-byte hex address/);
  assert.throws(() => erc20.bind({ tokens: '*', pools: [] }), /only 'tokens'/);
});
