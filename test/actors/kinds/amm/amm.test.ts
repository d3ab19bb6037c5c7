import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keccak_256 } from '@noble/hashes/sha3.js';
import amm from '../../../../actors/kinds/amm/index.js';
import { parsePool, POOL_KEY_PREFIX, poolKey, type PoolRow } from '../../../../actors/kinds/amm/pools.js';
import erc20 from '../../../../actors/kinds/erc20/index.js';
import { balanceKey, decodeRow } from '../../../../actors/kinds/erc20/balances.js';
import type { BlockInput, KindContext } from '../../../../actors/kinds/sdk/kind.js';
import type { ProcessorTables } from '../../../../store/store.js';
import { DEVNET_CONTRACTS } from '../../../../net/devnet/index.js';
import { closeTempStore, createTempStore } from '../../../api/aggregate/store-fixture.js';
import { defaultDevnetChain, mainnetFixtureBlocks, type FixtureBlock } from '../blobs/support.js';

const topic = (signature: string) => `0x${Buffer.from(keccak_256(new TextEncoder().encode(signature))).toString('hex')}`;
const SYNC = topic('Sync(uint112,uint112)');
const V2_SWAP = topic('Swap(address,uint256,uint256,uint256,uint256,address)');
const V3_SWAP = topic('Swap(address,address,int256,int256,uint160,uint128,int24)');
const V3_MINT = topic('Mint(address,address,int24,int24,uint128,uint256,uint256)');
const V3_BURN = topic('Burn(address,int24,int24,uint128,uint256,uint256)');

const words = (data: string) => Array.from({ length: (data.length - 2) / 64 }, (_, i) => BigInt(`0x${data.slice(2 + i * 64, 66 + i * 64)}`));
const toSigned = (v: bigint) => (v >> 255n === 1n ? v - (1n << 256n) : v);

interface Reference { reserves?: [bigint, bigint]; swaps: number; volume0: bigint; volume1: bigint; v3?: { sqrtPriceX96: bigint; tick: number; liquidity: bigint; touchedAfter: boolean } }

/** Independent reference over the receipts' logs: last Sync reserves, swap counts and volumes, last V3 Swap state. */
function reference(blocks: readonly FixtureBlock[]): Map<string, Reference> {
  const pools = new Map<string, Reference>();
  const of = (address: string) => {
    const key = address.toLowerCase();
    if (!pools.has(key)) pools.set(key, { swaps: 0, volume0: 0n, volume1: 0n });
    return pools.get(key)!;
  };
  for (const block of blocks) {
    for (const receipt of block.receipts) {
      for (const log of receipt.logs) {
        const w = words(log.data);
        if (log.topics[0] === SYNC && log.topics.length === 1 && w.length === 2) of(log.address).reserves = [w[0]!, w[1]!];
        else if (log.topics[0] === V2_SWAP && log.topics.length === 3 && w.length === 4) {
          const p = of(log.address);
          p.swaps += 1;
          p.volume0 += w[0]! + w[2]!;
          p.volume1 += w[1]! + w[3]!;
        } else if (log.topics[0] === V3_SWAP && log.topics.length === 3 && w.length === 5) {
          const p = of(log.address);
          p.swaps += 1;
          const [a0, a1] = [toSigned(w[0]!), toSigned(w[1]!)];
          p.volume0 += a0 < 0n ? -a0 : a0;
          p.volume1 += a1 < 0n ? -a1 : a1;
          p.v3 = { sqrtPriceX96: w[2]!, liquidity: w[3]!, tick: Number(toSigned(w[4]!)), touchedAfter: false };
        } else if ((log.topics[0] === V3_MINT || log.topics[0] === V3_BURN) && log.topics.length === 4) {
          const p = of(log.address);
          if (p.v3) p.v3.touchedAfter = true;
        }
      }
    }
  }
  return pools;
}

function input(block: FixtureBlock): BlockInput {
  return { number: block.number, hash: block.hash, header: block.header, transactions: [], receipts: block.receipts, sizeBytes: block.sizeBytes, parentTimestamp: null };
}

function context(tables: ProcessorTables): KindContext {
  return { tables, network: 'test', schedule: { forks: [] } as unknown as KindContext['schedule'], genesis: { hash: `0x${'00'.repeat(32)}`, timestamp: 0 } };
}

function storedPools(tables: ProcessorTables): Map<string, PoolRow> {
  return new Map([...tables.entities.getRange({ start: Buffer.of(POOL_KEY_PREFIX), end: Buffer.of(POOL_KEY_PREFIX + 1) })].map(({ value }) => {
    const row = parsePool(Buffer.from(value));
    return [row.pool, row];
  }));
}

test('pools over the mainnet fixture blocks: V2 reserves, V3 price/tick/liquidity, swap counts and volumes equal an independent reading of the logs', async (t) => {
  const temp = createTempStore('cdn-amm-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('amm@test');
  const kind = amm.bind({ pools: '*' });
  const blocks = mainnetFixtureBlocks();
  await temp.store.write(() => { for (const block of blocks) kind.apply(context(tables), input(block), 'included'); });
  const expected = reference(blocks);
  const stored = storedPools(tables);
  assert.ok([...expected.values()].filter((p) => p.reserves).length > 5, 'the fixtures hold V2 Syncs');
  assert.ok([...expected.values()].filter((p) => p.v3).length > 5, 'the fixtures hold V3 Swaps');
  assert.deepEqual(new Set(stored.keys()), new Set(expected.keys()));
  for (const [pool, want] of expected) {
    const row = stored.get(pool)!;
    assert.equal(row.swapCount, String(want.swaps), pool);
    assert.deepEqual([row.volume0, row.volume1], [want.volume0.toString(), want.volume1.toString()], pool);
    if (want.reserves) assert.deepEqual([row.reserve0, row.reserve1], want.reserves.map(String), pool);
    if (want.v3) {
      assert.deepEqual([row.sqrtPriceX96, row.tick], [want.v3.sqrtPriceX96.toString(), want.v3.tick], pool);
      if (!want.v3.touchedAfter) assert.equal(row.liquidity, want.v3.liquidity.toString(), pool);
    }
  }
});

test('undo restores every pool row byte for byte and removes pools first seen in the undone block', async (t) => {
  const temp = createTempStore('cdn-amm-');
  t.after(() => closeTempStore(temp));
  const tables = temp.store.processor('amm@test');
  const kind = amm.bind({ pools: '*' });
  const blocks = mainnetFixtureBlocks();
  const raw = () => new Map([...tables.entities.getRange({})].map(({ key, value }) => [Buffer.from(key).toString('hex'), Buffer.from(value).toString('hex')]));
  const states: Array<Map<string, string>> = [];
  for (const block of blocks) {
    states.push(raw());
    await temp.store.write(() => kind.apply(context(tables), input(block), 'included'));
  }
  for (let i = blocks.length - 1; i >= 0; i -= 1) {
    const changes = await temp.store.write(() => kind.undo(context(tables), blocks[i]!.number, blocks[i]!.hash, null));
    assert.ok(changes.every((c) => c.kind === 'amm.pool.put' || c.kind === 'amm.pool.delete'));
    assert.deepEqual(raw(), states[i], `undo of ${blocks[i]!.number}`);
  }
});

test('the devnet pools: reserves from Sync equal the pools\' token balances from the erc20 kind over the same blocks', async (t) => {
  const chain = await defaultDevnetChain();
  const temp = createTempStore('cdn-amm-');
  t.after(() => closeTempStore(temp));
  const pools = temp.store.processor('amm@devnet');
  const balances = temp.store.processor('erc20@devnet');
  const ammKind = amm.bind({ pools: DEVNET_CONTRACTS.pools.map((p) => p.address) });
  const erc20Kind = erc20.bind({ tokens: '*' });
  await temp.store.write(() => {
    for (const b of chain.blocks) {
      const block: FixtureBlock = { number: b.block.header.number, header: b.block.header, hash: b.hash, body: b.block, receipts: b.receipts, sizeBytes: 0 };
      ammKind.apply(context(pools), input(block), 'included');
      erc20Kind.apply(context(balances), input(block), 'included');
    }
  });
  for (const pool of DEVNET_CONTRACTS.pools) {
    const row = parsePool(Buffer.from(pools.entities.get(poolKey(pool.address))!));
    assert.equal(row.protocol, 'uniswap_v2');
    const balance = (token: string) => decodeRow(balanceKey(token, pool.address), Buffer.from(balances.entities.get(balanceKey(token, pool.address))!), null).balance;
    assert.deepEqual([row.reserve0, row.reserve1], [balance(pool.token0), balance(pool.token1)], pool.address);
    assert.ok(BigInt(row.swapCount) > 0n, 'the devnet swaps through every pool');
  }
});
