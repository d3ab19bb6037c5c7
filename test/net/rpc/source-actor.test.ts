import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { HeadNotice } from '../../../actors/chain/messages.js';
import type { RpcSourceArgs } from '../../../actors/sources/rpc.js';
import { decodeBlockBody } from '../../../net/eth/block.js';
import { decodeHeader, hashHeader } from '../../../net/eth/header.js';
import { hexToBytes, type Hash } from '../../../net/eth/hex.js';
import { CodedError } from '../../../runtime/errors.js';
import type { ActorSystem } from '../../../runtime/system.js';
import type { ChildSpec } from '../../../runtime/supervisor.js';
import { getBlockNumber, getBodyBytes, getHeaderBytes, getReceiptsBytes } from '../../../store/chain-material.js';
import { openStore, type Store } from '../../../store/store.js';
import { lane, newSystem, waitFor } from '../../runtime/helpers.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';
import type { AnyMessage } from '../../../runtime/protocol.js';

const SOURCE_MODULE = fileURLToPath(new URL('../../../actors/sources/rpc.js', import.meta.url));
const RECORDER_MODULE = fileURLToPath(new URL('./actors/chain-recorder.js', import.meta.url));
const SENDER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
const RECIPIENT = '0x70997970c51812dc3a010c7d01b50e0d17dc79c8';

function spec(name: string, module: string, args?: unknown): ChildSpec {
  return { name, module, args, restart: 'permanent', mailboxCapacity: 64, memoryMb: 256, shutdownMs: 5000 };
}

describe('the rpc source actor follows anvil through the real runtime', () => {
  let anvil: Anvil;
  let front: FakeUpstream;
  let dataDir: string;
  let store: Store;
  const systems: ActorSystem[] = [];

  const args = (overrides: Partial<RpcSourceArgs> = {}): RpcSourceArgs => ({
    url: `http://operator:p4ssw0rd@127.0.0.1:${front.port}/rpc?key=topsecret`, wsUrl: null, pollIntervalMs: 100, dataDir, maxReorgDepth: 16,
    requestTimeoutMs: 2000, maxRetries: 1, backoffInitialMs: 20, backoffMaxMs: 100, ...overrides,
  });
  const start = (sourceArgs: RpcSourceArgs): ActorSystem => {
    const system = newSystem();
    systems.push(system);
    system.startLane(lane('chain', [spec('chain', RECORDER_MODULE)]));
    system.startLane(lane('source', [spec('source', SOURCE_MODULE, sourceArgs)]));
    return system;
  };
  const heads = (system: ActorSystem) => system.ask<AnyMessage, HeadNotice[]>('chain', { type: 'heads' });
  const sourceLane = (system: ActorSystem) => system.laneStatuses().find((status) => status.lane === 'source')!;
  const upstreamHead = async () => anvil.rpc<{ number: string; hash: Hash }>('eth_getBlockByNumber', ['latest', false]);
  before(async () => {
    anvil = await startAnvil();
    front = await startFakeUpstream(anvil.url);
    dataDir = mkdtempSync(join(tmpdir(), 'cdn-rpc-source-'));
    store = openStore({ dataDir });
  });
  after(async () => {
    for (const system of systems) await system.stop();
    await store?.close();
    await front?.close();
    await anvil?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts maxReorgDepth below the upstream head, records verified material, announces heads, follows a reorg, degrades and recovers', async () => {
    await anvil.mine(20);
    const system = start(args());
    let notices: HeadNotice[] = [];
    const until = async (predicate: (list: HeadNotice[]) => boolean, what: string) => {
      await waitFor(() => predicate(notices), 30_000, what).catch((error: Error) => {
        throw new Error(`${error.message}; heads so far: ${JSON.stringify(notices)}`);
      });
    };
    const poll = setInterval(() => void heads(system).then((list) => { notices = list; }, () => undefined), 25);
    try {
      const first = await upstreamHead();
      await until((list) => list.some((head) => head.hash === first.hash), 'the upstream head');
      // maxReorgDepth 16, and anvil's finalized block is lower: following began 16 below the head it saw.
      const began = await anvil.rpc<{ hash: Hash }>('eth_getBlockByNumber', [`0x${(Number(first.number) - 16).toString(16)}`, false]);
      assert.deepEqual(notices[0], { type: 'head', number: Number(first.number) - 16, hash: began.hash }, 'the first notice is where following began');
      await waitFor(() => sourceLane(system).state === 'ready', 30_000, 'the source lane to be ready');

      await anvil.rpc('evm_setAutomine', [false]);
      for (let i = 0; i < 3; i += 1) await anvil.rpc('eth_sendTransaction', [{ from: SENDER, to: RECIPIENT, value: '0x1' }]);
      await anvil.mine(2);
      await anvil.rpc('evm_setAutomine', [true]);
      const second = await upstreamHead();
      await until((list) => list.some((head) => head.hash === second.hash), 'the head after two new blocks');
      const withTransfers = Number(second.number) - 1;
      const transferBlock = await anvil.rpc<{ hash: Hash }>('eth_getBlockByNumber', [`0x${withTransfers.toString(16)}`, false]);
      assertRecorded(store, transferBlock.hash, withTransfers, 3);

      await anvil.rpc('anvil_reorg', [2, []]);
      const replaced = await upstreamHead();
      assert.notEqual(replaced.hash, second.hash);
      await until((list) => list.at(-1)?.hash === replaced.hash, 'the head of the replacement branch');
      assert.equal(notices.at(-1)!.number, Number(second.number), 'same height, new hash');
      const replacement = await anvil.rpc<{ hash: Hash }>('eth_getBlockByNumber', [`0x${withTransfers.toString(16)}`, false]);
      assertRecorded(store, replacement.hash, withTransfers, 0);
      assertRecorded(store, transferBlock.hash, withTransfers, 3);

      await anvil.mine(70);
      const finalized = await anvil.rpc<{ number: string; hash: Hash }>('eth_getBlockByNumber', ['finalized', false]);
      assert.deepEqual(await system.ask('source', { type: 'finalized' }), { number: Number(finalized.number), hash: finalized.hash });

      front.down();
      await waitFor(() => sourceLane(system).state === 'degraded', 30_000, 'the source lane to degrade');
      assert.match(sourceLane(system).lastError ?? '', /UpstreamError|HTTP 503/);
      for (const secret of ['p4ssw0rd', 'operator', 'topsecret']) assert.ok(!(sourceLane(system).lastError ?? '').includes(secret), `no ${secret} in the reason`);
      await assert.rejects(system.ask('source', { type: 'finalized' }), (error: unknown) => error instanceof CodedError && error.code === 'source_unavailable');
      front.up();
      await anvil.mine();
      const recovered = await upstreamHead();
      await waitFor(() => sourceLane(system).state === 'ready', 30_000, 'the source lane to recover');
      await until((list) => list.at(-1)?.hash === recovered.hash, 'the head after recovery');
      const distinct = new Set(notices.map((head) => head.hash));
      assert.equal(distinct.size, notices.length, 'each head is announced once');
    } finally {
      clearInterval(poll);
      await system.stop();
    }
  });

  it('a newHeads subscription wakes the source long before its poll interval', async () => {
    const system = start(args({ url: anvil.url, wsUrl: anvil.wsUrl, pollIntervalMs: 60_000 }));
    await waitFor(() => sourceLane(system).state === 'ready', 30_000, 'the source lane to be ready');
    await anvil.mine();
    const head = await upstreamHead();
    let seen = false;
    await waitFor(() => {
      void heads(system).then((list) => { seen = list.some((notice) => notice.hash === head.hash); }, () => undefined);
      return seen;
    }, 30_000, 'a head notice woken by newHeads');
    await system.stop();
  });
});

function assertRecorded(store: Store, hash: Hash, number: number, transactions: number): void {
  const key = hexToBytes(hash);
  assert.equal(getBlockNumber(store, key), number, `block ${hash} is indexed at ${number}`);
  const header = decodeHeader(getHeaderBytes(store, key)!);
  assert.equal(hashHeader(header), hash, 'the stored header hashes to the block hash');
  assert.equal(decodeBlockBody(getBodyBytes(store, key)!).transactions.length, transactions);
  assert.ok(getReceiptsBytes(store, key), 'receipts are stored');
}
