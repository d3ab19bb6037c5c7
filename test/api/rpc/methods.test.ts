/**
 * The JSON-RPC method layer against a real store filled from a devnet run (reorgs included),
 * checked against the devnet's own blocks and receipts and, for senders and contract addresses,
 * against viem's independent implementations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { getContractAddress, recoverTransactionAddress, type Hex as ViemHex } from 'viem';
import { encodeBlock, encodeHeader, encodeReceipt, encodeTransaction, hashTransaction, TRANSACTION_TYPE_BYTE, blobBaseFee, blobParamsAt, bytesToHex, type Hex } from '../../../net/eth/index.js';
import { TRANSFER_TOPIC, type DevnetBlock } from '../../../net/devnet/index.js';
import { devnetStore, LIMITS, type DevnetStore } from './devnet-store.js';
import { createRpcContext } from '../../../api/rpc/rpc-context.js';
import { answerBody } from '../../../api/rpc/dispatch.js';

type Rpc<T> = { jsonrpc: '2.0'; id: number | string | null; result?: T; error?: { code: number; message: string; data?: Record<string, unknown> } };
type JsonBlock = { number: Hex; hash: Hex; parentHash: Hex; size: Hex; timestamp: Hex; transactions: Array<Hex | Record<string, Hex | null>>; [key: string]: unknown };
type JsonLog = { address: Hex; topics: Hex[]; data: Hex; blockNumber: Hex; blockHash: Hex; transactionHash: Hex; transactionIndex: Hex; logIndex: Hex; removed: boolean };
type JsonReceipt = Record<string, unknown> & { transactionHash: Hex; gasUsed: Hex; logs: JsonLog[]; contractAddress: Hex | null; from: Hex; blockHash: Hex; status: Hex };

const HEAD = 64;
let d: DevnetStore;

const req = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });
function result<T>(method: string, params: unknown[] = []): T {
  const answer = d.call<Rpc<T>>(req(method, params));
  assert.equal(answer.error, undefined, `${method}: ${JSON.stringify(answer.error)}`);
  return answer.result as T;
}
function error(method: string, params: unknown[] = []): NonNullable<Rpc<unknown>['error']> {
  const answer = d.call<Rpc<unknown>>(req(method, params));
  assert.ok(answer.error, `${method} should fail, got ${JSON.stringify(answer.result)?.slice(0, 200)}`);
  return answer.error;
}
const hex = (n: number | bigint) => `0x${n.toString(16)}`;
const canonical = (): DevnetBlock[] => d.run.canonical;

before(async () => {
  d = await devnetStore({}, HEAD);
});
after(async () => {
  await d?.close();
});

describe('JSON-RPC methods over a devnet store', () => {
  it('answers the head, chain id, syncing and client version', () => {
    assert.equal(result('eth_blockNumber'), hex(HEAD));
    assert.equal(result('eth_chainId'), '0x539');
    assert.equal(result('net_version'), '1337');
    assert.equal(result('eth_syncing'), false);
    assert.equal(typeof result('web3_clientVersion'), 'string');
    assert.deepEqual(result('node_getCapabilities'), { probe: 'capabilities' });
  });

  it('serves every canonical block by number and by hash, with its transaction hashes, size and header fields', () => {
    for (const block of canonical()) {
      const { header } = block.block;
      const byNumber = result<JsonBlock>('eth_getBlockByNumber', [hex(header.number), false]);
      assert.equal(byNumber.hash, block.hash);
      assert.equal(byNumber.parentHash, header.parentHash);
      assert.equal(byNumber.size, hex(encodeBlock(block.block).length));
      assert.deepEqual(byNumber.transactions, block.block.transactions.map(hashTransaction));
      assert.deepEqual(Object.keys(byNumber), [...Object.keys(byNumber)].sort(), 'fields in alphabetical order, as execution clients write them');
      assert.deepEqual(result<JsonBlock>('eth_getBlockByHash', [block.hash, false]), byNumber);
    }
  });

  it('renders full transactions with the recovered sender, the effective gas price and each type\'s fields', async () => {
    const seenTypes = new Set<string>();
    for (const block of canonical().slice(-6)) {
      const full = result<JsonBlock>('eth_getBlockByNumber', [hex(block.block.header.number), true]);
      for (const [index, tx] of block.block.transactions.entries()) {
        const json = full.transactions[index] as Record<string, Hex | null>;
        seenTypes.add(tx.type);
        assert.equal(json.hash, hashTransaction(tx));
        assert.equal(json.type, hex(TRANSACTION_TYPE_BYTE[tx.type]));
        assert.equal(json.blockHash, block.hash);
        assert.equal(json.transactionIndex, hex(index));
        const sender = await recoverTransactionAddress({ serializedTransaction: bytesToHex(encodeTransaction(tx)) as ViemHex } as Parameters<typeof recoverTransactionAddress>[0]);
        assert.equal(json.from, sender.toLowerCase());
        if (tx.type !== 'legacy' && tx.type !== 'eip2930') {
          const base = block.block.header.baseFeePerGas!;
          const tip = tx.maxPriorityFeePerGas < tx.maxFeePerGas - base ? tx.maxPriorityFeePerGas : tx.maxFeePerGas - base;
          assert.equal(json.gasPrice, hex(base + tip));
          assert.equal(json.yParity, hex(tx.yParity));
        }
        if (tx.type === 'eip4844') assert.deepEqual(json.blobVersionedHashes, tx.blobVersionedHashes);
        if (tx.type === 'eip7702') assert.equal((json.authorizationList as unknown as unknown[]).length, tx.authorizationList.length);
      }
    }
    assert.ok(seenTypes.has('eip1559') && seenTypes.has('eip4844'), `types seen: ${[...seenTypes]}`);
  });

  it('serves block receipts whose gas adds up to the header, each equal to eth_getTransactionReceipt', () => {
    for (const block of canonical().slice(-24)) {
      const receipts = result<JsonReceipt[]>('eth_getBlockReceipts', [hex(block.block.header.number)]);
      assert.equal(receipts.length, block.receipts.length);
      assert.equal(receipts.reduce((sum, r) => sum + BigInt(r.gasUsed), 0n), block.block.header.gasUsed);
      let logIndex = 0;
      receipts.forEach((receipt, i) => {
        assert.deepEqual(Object.keys(receipt), [...Object.keys(receipt)].sort());
        assert.equal(receipt.status, block.receipts[i]!.status === 'success' ? '0x1' : '0x0');
        assert.deepEqual(receipt.logs.map((l) => [l.address, l.topics, l.data, l.logIndex, l.removed]), block.receipts[i]!.logs.map((l) => [l.address, l.topics, l.data, hex(logIndex++), false]));
        const tx = block.block.transactions[i]!;
        if (tx.to === null) assert.equal(receipt.contractAddress, getContractAddress({ from: receipt.from as ViemHex, nonce: tx.nonce }).toLowerCase());
        else assert.equal(receipt.contractAddress, null);
        if (tx.type === 'eip4844') {
          const params = blobParamsAt(d.context.spec.schedule, { number: block.block.header.number, timestamp: block.block.header.timestamp })!;
          assert.equal(receipt.blobGasPrice, hex(blobBaseFee(block.block.header.excessBlobGas!, params.baseFeeUpdateFraction)));
        }
        assert.deepEqual(result('eth_getTransactionReceipt', [receipt.transactionHash]), receipt);
      });
      assert.deepEqual(result('eth_getBlockReceipts', [block.hash]), receipts);
    }
  });

  it('serves the raw getters: debug_getRawBlock/Header the block\'s RLP, debug_getRawReceipts each receipt\'s consensus encoding', () => {
    for (const block of canonical().slice(-12)) {
      const { number } = block.block.header;
      assert.equal(result('debug_getRawBlock', [hex(number)]), bytesToHex(encodeBlock(block.block)));
      assert.equal(result('debug_getRawBlock', [block.hash]), bytesToHex(encodeBlock(block.block)));
      assert.equal(result('debug_getRawHeader', [hex(number)]), bytesToHex(encodeHeader(block.block.header)));
      assert.deepEqual(result('debug_getRawReceipts', [hex(number)]), block.receipts.map((receipt) => bytesToHex(encodeReceipt(receipt))));
    }
    assert.equal(result('debug_getRawBlock', [hex(HEAD + 1)]), null);
    assert.equal(result('debug_getRawReceipts', ['0x' + 'ab'.repeat(32)]), null);
    assert.equal(error('debug_getRawBlock', ['nonsense']).code, -32602);
    assert.equal(error('debug_getRawReceipts', []).code, -32602);
  });

  it('forgets transactions of abandoned blocks, while the abandoned blocks stay readable by hash', () => {
    const onCanonical = new Set(canonical().flatMap((b) => b.block.transactions.map(hashTransaction)));
    const abandoned = [...d.run.produced.values()].filter((b) => canonical()[b.block.header.number]?.hash !== b.hash);
    assert.ok(abandoned.length >= 4, 'the run crossed reorgs');
    let checked = 0;
    for (const block of abandoned) {
      assert.equal(result<JsonBlock>('eth_getBlockByHash', [block.hash, false]).hash, block.hash);
      for (const tx of block.block.transactions) {
        const hash = hashTransaction(tx);
        const receipt = result<JsonReceipt | null>('eth_getTransactionReceipt', [hash]);
        if (onCanonical.has(hash)) assert.notEqual(receipt?.blockHash, block.hash);
        else {
          assert.equal(receipt, null);
          checked += 1;
        }
      }
    }
    assert.ok(checked > 0);
  });

  it('resolves latest, pending, earliest, safe and finalized; answers null above the head', () => {
    assert.equal(result<JsonBlock>('eth_getBlockByNumber', ['latest', false]).number, hex(HEAD));
    assert.equal(result<JsonBlock>('eth_getBlockByNumber', ['pending', false]).number, hex(HEAD));
    assert.equal(result<JsonBlock>('eth_getBlockByNumber', ['earliest', false]).number, '0x0');
    const finalized = d.run.finalizedTrail.at(-1)!;
    assert.equal(result<JsonBlock>('eth_getBlockByNumber', ['finalized', false]).hash, finalized.hash);
    assert.equal(result<JsonBlock>('eth_getBlockByNumber', ['safe', false]).hash, finalized.hash);
    assert.equal(result('eth_getBlockByNumber', [hex(HEAD + 1), false]), null);
    assert.equal(result('eth_getBlockReceipts', [hex(HEAD + 1)]), null);
    assert.equal(result('eth_getBlockByHash', [`0x${'00'.repeat(32)}`, false]), null);
    assert.equal(result('eth_getTransactionReceipt', [`0x${'ab'.repeat(32)}`]), null);
  });

  it('filters logs by topic, address, null wildcards and OR lists, matching a scan of the devnet receipts', () => {
    const all = canonical().slice(1).flatMap((block) => block.receipts.flatMap((r) => r.logs.map((log) => ({ ...log, block: block.block.header.number }))));
    const within = (from: number, to: number) => all.filter((l) => l.block >= from && l.block <= to);
    const transfers = result<JsonLog[]>('eth_getLogs', [{ fromBlock: hex(20), toBlock: hex(60), topics: [TRANSFER_TOPIC] }]);
    assert.ok(all.length > LIMITS.maxLogsBlockRange, 'the range holds enough logs to mean something');
    assert.deepEqual(transfers.map((l) => [l.address, l.topics, l.data]), within(20, 60).filter((l) => l.topics[0] === TRANSFER_TOPIC).map((l) => [l.address, l.topics, l.data]));
    assert.ok(transfers.length > 10);
    const token = transfers[0]!.address;
    const byAddress = result<JsonLog[]>('eth_getLogs', [{ fromBlock: hex(20), toBlock: hex(60), address: [token.toUpperCase().replace('0X', '0x')] }]);
    assert.ok(byAddress.every((l) => l.address === token) && byAddress.length === within(20, 60).filter((l) => l.address === token).length);
    const recipient = transfers[0]!.topics[2]!;
    const wildcard = result<JsonLog[]>('eth_getLogs', [{ fromBlock: hex(20), toBlock: hex(60), topics: [null, [], [recipient, `0x${'00'.repeat(32)}`]] }]);
    assert.equal(wildcard.length, within(20, 60).filter((l) => l.topics.length >= 3 && l.topics[2] === recipient).length);
    const block = canonical()[30]!;
    assert.deepEqual(result<JsonLog[]>('eth_getLogs', [{ blockHash: block.hash }]).map((l) => l.blockHash), block.receipts.flatMap((r) => r.logs).map(() => block.hash));
  });

  it('stops eth_getLogs at the result limit with -32005 rather than a truncated list', () => {
    const narrow = createRpcContext({ store: d.store, limits: { ...LIMITS, maxLogsResults: 3 }, capabilities: {}, chain: d.context.spec });
    const answer = JSON.parse(answerBody(narrow, JSON.stringify(req('eth_getLogs', [{ fromBlock: hex(20), toBlock: hex(30) }])))!.toString()) as Rpc<unknown>;
    assert.deepEqual(answer.error?.data, { code: 'query_too_expensive', limit: 3 });
    assert.equal(answer.error?.code, -32005);
    // Worded as providers word it: indexers (Ponder's getLogsRetryHelper) halve the range on this message.
    assert.match(answer.error!.message, /query returned more than 3 results/);
  });

  it('rejects log ranges beyond the head, reversed, too wide or mixed with blockHash', () => {
    assert.deepEqual(error('eth_getLogs', [{ fromBlock: hex(HEAD), toBlock: hex(HEAD + 5) }]), { code: -32602, message: 'block range extends beyond current head block' });
    assert.deepEqual(error('eth_getLogs', [{ fromBlock: hex(40), toBlock: hex(30) }]), { code: -32602, message: 'invalid block range params' });
    const wide = error('eth_getLogs', [{ fromBlock: '0x1', toBlock: hex(LIMITS.maxLogsBlockRange + 1) }]);
    assert.equal(wide.code, -32005);
    assert.deepEqual(wide.data, { code: 'query_too_expensive', limit: LIMITS.maxLogsBlockRange, requested: LIMITS.maxLogsBlockRange + 1 });
    // Ponder's getLogsRetryHelper chunks by the number after "block range exceeds".
    assert.match(wide.message, new RegExp(`block range exceeds ${LIMITS.maxLogsBlockRange} blocks`));
    assert.equal(error('eth_getLogs', [{ blockHash: canonical()[3]!.hash, fromBlock: '0x1' }]).message, 'invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other');
    assert.equal(error('eth_getLogs', [{ fromBlock: hex(HEAD - LIMITS.maxLogsBlockRange + 1), topics: [null, null, null, null, null] }]).code, -32602);
  });

  it('reports eth_config and eth_blobBaseFee from the fork schedule at the head', () => {
    const head = canonical()[HEAD]!.block.header;
    const params = blobParamsAt(d.context.spec.schedule, { number: HEAD, timestamp: head.timestamp })!;
    assert.equal(result('eth_blobBaseFee'), hex(blobBaseFee(head.excessBlobGas!, params.baseFeeUpdateFraction)));
    type ForkConfig = { activationTime: number; blobSchedule: { target: number; max: number }; chainId: Hex; forkId: Hex; precompiles: Record<string, Hex>; systemContracts: Record<string, Hex> };
    const config = result<{ current: ForkConfig; next: ForkConfig | null; last: ForkConfig | null }>('eth_config');
    assert.ok(config.current.activationTime <= head.timestamp);
    assert.equal(config.current.chainId, '0x539');
    assert.match(config.current.forkId, /^0x[0-9a-f]{8}$/);
    assert.deepEqual(config.current.blobSchedule, { target: params.target, max: params.max, baseFeeUpdateFraction: Number(params.baseFeeUpdateFraction) });
    assert.equal(config.current.blobSchedule.target, 10, 'BPO1 (block 60 on) is in force at block 64');
    assert.ok(config.current.precompiles.P256VERIFY && config.current.systemContracts.HISTORY_STORAGE_ADDRESS);
    assert.equal(config.current.systemContracts.DEPOSIT_CONTRACT_ADDRESS, `0x${'00'.repeat(20)}`);
    assert.deepEqual([config.next, config.last], [null, null], 'no fork is scheduled after BPO1');
  });
});

describe('JSON-RPC errors', () => {
  it('answers state methods, unserved methods and subscriptions over HTTP with -32004 and the reason', () => {
    assert.deepEqual(error('eth_getBalance', ['0x' + '11'.repeat(20), 'latest']).data, { code: 'unsupported_capability', reason: 'evm_state_unavailable' });
    assert.equal(error('eth_call', [{ to: '0x' + '11'.repeat(20) }, 'latest']).code, -32004);
    assert.deepEqual(error('eth_sendRawTransaction', ['0x00']).data, { code: 'unsupported_capability', reason: 'not_served' });
    assert.deepEqual(error('eth_subscribe', ['newHeads']).data, { code: 'unsupported_capability', reason: 'websocket_required' });
  });

  it('answers unknown methods -32601 and bad parameters -32602 with geth\'s messages', () => {
    assert.deepEqual(error('eth_nope'), { code: -32601, message: 'the method eth_nope does not exist/is not available' });
    assert.deepEqual(error('eth_getBlockByNumber', ['0x01', false]), { code: -32602, message: 'invalid argument 0: hex number with leading zero digits' });
    assert.deepEqual(error('eth_getBlockByNumber', ['0x1']), { code: -32602, message: 'missing value for required argument 1' });
    assert.equal(error('eth_getBlockByNumber', ['0x1', 'yes']).code, -32602);
    assert.equal(error('eth_getBlockByHash', ['0x1234', false]).code, -32602);
    assert.deepEqual(error('eth_blockNumber', [1]), { code: -32602, message: 'too many arguments, want at most 0' });
  });

  it('answers a parse error and invalid requests with id null, batches in order, and notifications with nothing', () => {
    assert.deepEqual(d.call('{"jsonrpc":"2.0",'), { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    assert.deepEqual(d.call({ id: 7, method: 'eth_blockNumber' }), { jsonrpc: '2.0', id: 7, error: { code: -32600, message: 'invalid request' } });
    assert.deepEqual(d.call([]), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } });
    const batch = d.call<Array<Rpc<unknown>>>([req('eth_chainId', [], 'a'), req('eth_nope', [], 2), { jsonrpc: '2.0', method: 'eth_blockNumber' }, 5, req('eth_blockNumber', [], 3)]);
    assert.deepEqual(batch.map((r) => [r.id, r.result ?? r.error?.code]), [['a', '0x539'], [2, -32601], [null, -32600], [3, hex(HEAD)]]);
    assert.equal(d.call({ jsonrpc: '2.0', method: 'eth_blockNumber' }), undefined);
    const tooMany = d.call<Rpc<unknown>>(Array.from({ length: LIMITS.maxBatchRequests + 1 }, (_, i) => req('eth_chainId', [], i)));
    assert.equal(tooMany.error?.code, -32005);
    assert.equal(tooMany.error?.data?.code, 'query_too_expensive');
  });
});

describe('before finality reaches the chain', () => {
  let early: DevnetStore;
  before(async () => {
    early = await devnetStore({ seed: 'rpc-early' }, 4, { finalize: false });
  });
  after(async () => {
    await early?.close();
  });

  it('reports the next and last scheduled forks in eth_config while Cancun is in force', () => {
    type ForkConfig = { activationTime: number; forkId: Hex; precompiles: Record<string, Hex>; blobSchedule: { target: number } };
    const answer = early.call<Rpc<{ current: ForkConfig; next: ForkConfig; last: ForkConfig }>>(req('eth_config'));
    const { current, next, last } = answer.result!;
    assert.equal(current.blobSchedule.target, 3);
    assert.equal(current.precompiles.BLS12_G1ADD, undefined, 'BLS precompiles start with Prague');
    assert.equal(next.blobSchedule.target, 6);
    assert.equal(next.precompiles.BLS12_G1ADD, '0x000000000000000000000000000000000000000b');
    assert.ok(next.activationTime > current.activationTime && last.activationTime > next.activationTime);
    assert.equal(last.blobSchedule.target, 10);
    assert.equal(new Set([current.forkId, next.forkId, last.forkId]).size, 3);
  });

  it('answers safe and finalized with -32002 finality_unavailable, never a substitute block', () => {
    for (const tag of ['safe', 'finalized']) {
      const answer = early.call<Rpc<unknown>>(req('eth_getBlockByNumber', [tag, false]));
      assert.deepEqual(answer.error, { code: -32002, message: `${tag} block not found`, data: { code: 'finality_unavailable' } });
    }
  });
});
