import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  amountOut,
  DEFAULT_DEVNET_CONFIG,
  DEVNET_CONTRACTS,
  devnetAccounts,
  INITIAL_ACCOUNT_TOKEN_BALANCE,
  SWAP_TOPIC,
  SYNC_TOPIC,
  TRANSFER_TOPIC,
} from '../../../net/devnet/index.js';
import type { Hash, Hex, Log } from '../../../net/eth/index.js';
import { blocksOf, runDevnet, type DevnetRun } from './run-devnet.js';

const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;
let run: DevnetRun;

before(async () => {
  run = await runDevnet({ reorgEvery: 25 }, 90);
});

function words(data: Hex): bigint[] {
  const out: bigint[] = [];
  for (let i = 2; i < data.length; i += 64) out.push(BigInt(`0x${data.slice(i, i + 64)}`));
  return out;
}

function topicAddress(topic: Hash): string {
  return `0x${topic.slice(26)}`;
}

function allLogs(): Log[] {
  return blocksOf(run).flatMap((block) => block.receipts.flatMap((receipt) => [...receipt.logs]));
}

describe('devnet logs', () => {
  it('uses the standard topic0 of Transfer, Sync and Swap', () => {
    assert.equal(TRANSFER_TOPIC, '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
    assert.equal(SYNC_TOPIC, '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1');
    assert.equal(SWAP_TOPIC, '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822');
  });

  it('emits only these events, from the token and pool contracts, with their indexed and data shapes', () => {
    const tokens = new Set(DEVNET_CONTRACTS.tokens);
    const pools = new Set(DEVNET_CONTRACTS.pools.map((pool) => pool.address));
    const counts = { transfer: 0, sync: 0, swap: 0 };
    for (const log of allLogs()) {
      if (log.topics[0] === TRANSFER_TOPIC) {
        assert.ok(tokens.has(log.address) && log.topics.length === 3 && log.data.length === 66);
        counts.transfer++;
      } else if (log.topics[0] === SYNC_TOPIC) {
        assert.ok(pools.has(log.address) && log.topics.length === 1 && log.data.length === 130);
        counts.sync++;
      } else {
        assert.equal(log.topics[0], SWAP_TOPIC);
        assert.ok(pools.has(log.address) && log.topics.length === 3 && log.data.length === 258);
        assert.equal(topicAddress(log.topics[1]!), DEVNET_CONTRACTS.router, 'the router is the Swap sender');
        counts.swap++;
      }
    }
    assert.ok(counts.transfer > 100 && counts.sync > 20 && counts.swap > 20, JSON.stringify(counts));
  });

  it('writes no logs for reverted transactions and some reverts happen', () => {
    let reverted = 0;
    for (const block of blocksOf(run)) {
      for (const receipt of block.receipts) {
        if (receipt.status === 'reverted') {
          reverted++;
          assert.equal(receipt.logs.length, 0);
        }
      }
    }
    assert.ok(reverted > 0);
  });

  it('keeps pool reserves consistent: each Swap follows V2 pricing from the previous Sync to the next', () => {
    const reserves = new Map<string, [bigint, bigint]>();
    for (const block of blocksOf(run)) {
      for (const receipt of block.receipts) {
        const logs = receipt.logs;
        logs.forEach((log, i) => {
          if (log.topics[0] !== SWAP_TOPIC) return;
          const [in0, in1, out0, out1] = words(log.data) as [bigint, bigint, bigint, bigint];
          const before = reserves.get(log.address);
          assert.ok(before, `pool ${log.address} was synced before its first swap`);
          const expectedOut = in0 > 0n ? amountOut(in0, before[0], before[1]) : amountOut(in1, before[1], before[0]);
          assert.equal(in0 > 0n ? out1 : out0, expectedOut, 'constant-product output with the 0.3 % fee');
          const sync = logs[i - 1]!;
          assert.equal(sync.topics[0], SYNC_TOPIC);
          assert.deepEqual(words(sync.data), [before[0] + in0 - out0, before[1] + in1 - out1]);
        });
        for (const log of logs) {
          if (log.topics[0] === SYNC_TOPIC) reserves.set(log.address, words(log.data) as [bigint, bigint]);
        }
      }
    }
    for (const pool of DEVNET_CONTRACTS.pools) {
      const [r0, r1] = reserves.get(pool.address)!;
      assert.ok(r0 > 0n && r1 > 0n && r0 < 1n << 112n && r1 < 1n << 112n);
    }
  });

  it('never overdraws a token balance, conserves supply, and keeps pool balances equal to their last Sync', () => {
    const balances = new Map<string, bigint>();
    const key = (token: string, holder: string) => `${token}/${holder}`;
    const lastSync = new Map<string, bigint[]>();
    for (const log of allLogs()) {
      if (log.topics[0] === SYNC_TOPIC) lastSync.set(log.address, words(log.data));
      if (log.topics[0] !== TRANSFER_TOPIC) continue;
      const from = topicAddress(log.topics[1]!);
      const to = topicAddress(log.topics[2]!);
      const [value] = words(log.data) as [bigint];
      if (from !== ZERO_ADDRESS) {
        const balance = (balances.get(key(log.address, from)) ?? 0n) - value;
        assert.ok(balance >= 0n, `${from} overdraws ${log.address}`);
        balances.set(key(log.address, from), balance);
      }
      balances.set(key(log.address, to), (balances.get(key(log.address, to)) ?? 0n) + value);
    }
    for (const pool of DEVNET_CONTRACTS.pools) {
      assert.deepEqual([balances.get(key(pool.token0, pool.address)), balances.get(key(pool.token1, pool.address))], lastSync.get(pool.address));
    }
    const accounts = devnetAccounts(DEFAULT_DEVNET_CONFIG.seed, DEFAULT_DEVNET_CONFIG.accounts);
    for (const token of DEVNET_CONTRACTS.tokens) {
      let supply = 0n;
      for (const [holderKey, balance] of balances) if (holderKey.startsWith(token)) supply += balance;
      const pooled = DEVNET_CONTRACTS.pools.reduce((sum, pool) => sum + (pool.token0 === token ? pool.initialReserve0 : pool.token1 === token ? pool.initialReserve1 : 0n), 0n);
      assert.equal(supply, INITIAL_ACCOUNT_TOKEN_BALANCE * BigInt(accounts.length) + pooled, `supply of ${token} is what block 1 minted`);
    }
  });

  it('mints every account and pool in block 1, then syncs each pool with its initial reserves before any swap', () => {
    const block1 = run.canonical[1]!;
    const syncs = block1.receipts.flatMap((receipt) => receipt.logs.filter((log) => log.topics[0] === SYNC_TOPIC));
    assert.deepEqual(
      syncs.slice(0, DEVNET_CONTRACTS.pools.length).map((log) => [log.address, ...words(log.data)]),
      DEVNET_CONTRACTS.pools.map((pool) => [pool.address, pool.initialReserve0, pool.initialReserve1]),
    );
    const mints = block1.receipts.flatMap((receipt) => receipt.logs.filter((log) => log.topics[1] === `0x${'00'.repeat(32)}`));
    assert.equal(mints.length, DEVNET_CONTRACTS.tokens.length * DEFAULT_DEVNET_CONFIG.accounts + 2 * DEVNET_CONTRACTS.pools.length);
  });
});
