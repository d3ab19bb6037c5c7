import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { importChain, type ImportOptions } from '../../../actors/import/chain-import.js';
import { ChainFileError, ImportBlockError, ImportError } from '../../../actors/import/errors.js';
import { parseReceiptsInput } from '../../../actors/import/receipts-file.js';
import { loadChainState } from '../../../actors/chain/journal-writer.js';
import { decodeChainRlp } from '../../../net/eth/chain-rlp.js';
import { encodeBlock, type Block } from '../../../net/eth/block.js';
import { parseGethGenesis, type ParsedGenesis } from '../../../net/eth/genesis.js';
import { hashHeader } from '../../../net/eth/header.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { decodeEth69Receipts } from '../../../net/eth/receipt.js';
import { transactionsRoot } from '../../../net/eth/trie-root.js';
import { lookupTransaction } from '../../../store/tx-index.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import { dbVerify } from '../../../store/commands.js';
import { getCanonicalHash, getReceiptsBytes } from '../../../store/chain-material.js';
import { openStore, type Store } from '../../../store/store.js';
import { decodeJournalMove } from '../../../store/journal.js';
import { acquireDataDirLock, DataDirLockedError } from '../../../store/lock.js';
import { FIXTURES } from '../../support/paths.js';
import { tempDir } from '../../store/helpers/temp-dir.js';
import { readIoCases } from '../../rpc/conformance/io-cases.js';
import { receiptsFromCases } from '../../rpc/conformance/receipts-from-cases.js';

const EXEC = join(FIXTURES, 'execution-apis');
const HIVE = join(FIXTURES, 'hive-eth-chain');
const EXEC_HEAD = '0xd226371d0b1551adb03fb52b71f08e3e11247fe9b1af994768af8cdaa8e7dcd7';
const EXEC_GENESIS = '0x44fd89d504659cd58f48f4796b77a7e7012cf296a2409afa2f6c3cb99b5b3d99';

function genesisOf(dir: string): ParsedGenesis {
  return parseGethGenesis(JSON.parse(readFileSync(join(dir, 'genesis.json'), 'utf8')));
}

function blocksOf(dir: string): Block[] {
  return [...decodeChainRlp(readFileSync(join(dir, 'chain.rlp')))];
}

function writeChain(path: string, blocks: readonly Block[]): string {
  writeFileSync(path, Buffer.concat(blocks.map((block) => Buffer.from(encodeBlock(block)))));
  return path;
}

async function withStore<T>(dataDir: string, read: (store: Store) => T): Promise<T> {
  const store = openStore({ dataDir, readOnly: true });
  try {
    return read(store);
  } finally {
    await store.close();
  }
}

function journalOps(store: Store): string[] {
  return [...store.chain.journal.getRange()].map(({ value }) => {
    const move = decodeJournalMove(value);
    return `${move.op}:${move.number}`;
  });
}

/** The recorded whole-block receipts of the conformance cases (blocks 1 and 54), keyed by block hash. */
function recordedReceipts(): Record<string, unknown[]> {
  const counts = new Map(blocksOf(EXEC).map((block) => [hashHeader(block.header), block.transactions.length]));
  return receiptsFromCases(readIoCases(EXEC, ['eth_getBlockReceipts', 'eth_getTransactionReceipt']), counts).complete;
}

function options(dataDir: string, extra: Partial<ImportOptions> = {}): ImportOptions {
  return { dataDir, chainFile: join(EXEC, 'chain.rlp'), genesis: genesisOf(EXEC), ...extra };
}

test('the execution-apis chain imports verified and parent-linked: genesis plus 54 blocks canonical, applied in the journal and finalized', async (t) => {
  const dataDir = join(tempDir(t, 'cdn-import-'), 'data');
  const result = await importChain(options(dataDir));
  assert.equal(result.genesisHash, EXEC_GENESIS);
  assert.equal(result.blocksInFile, 54);
  assert.equal(result.imported, 55, 'the genesis from genesis.json and the 54 blocks of the file');
  assert.deepEqual(result.head, { number: 54, hash: EXEC_HEAD });
  assert.deepEqual(result.finalized, { number: 54, hash: EXEC_HEAD });
  assert.deepEqual(result.receipts, { stored: 1, unavailable: 54, added: 0, unmatched: 0 }, 'only the empty genesis has known receipts; every block of the file has transactions');
  await withStore(dataDir, (store) => {
    assert.equal(store.chainId, 3503995874084926);
    const ops = journalOps(store);
    assert.deepEqual(ops, [...Array.from({ length: 55 }, (_, n) => `apply:${n}`), 'finalize:54']);
    const blocks = blocksOf(EXEC);
    for (const block of blocks) assert.equal(getCanonicalHash(store, block.header.number)?.toString('hex'), hashHeader(block.header).slice(2));
    assert.equal(getReceiptsBytes(store, hexToBytes(EXEC_HEAD)), undefined, 'no receipts entry: unavailable, never invented');
    assert.deepEqual(decodeEth69Receipts(getReceiptsBytes(store, hexToBytes(EXEC_GENESIS))!), []);
    const lastTx = blocks.at(-1)!.transactions[3]!;
    assert.deepEqual(lookupTransaction(store, hexToBytes(hashTransaction(lastTx))), { blockHash: Buffer.from(hexToBytes(EXEC_HEAD)), index: 3 }, 'the transaction index is written with the journal moves');
    const state = loadChainState(store);
    assert.deepEqual(state.head, { number: 54, hash: EXEC_HEAD });
    assert.equal(state.anchor, 0);
  });
  const verified = await dbVerify(dataDir);
  assert.ok(verified.ok, JSON.stringify(verified.checks.filter((c) => !c.ok)));
});

test('the 600-block hive chain imports and links to the head block the fixture names; blocks without transactions get their empty receipts', async (t) => {
  const dataDir = join(tempDir(t, 'cdn-import-'), 'data');
  const result = await importChain({ dataDir, chainFile: join(HIVE, 'chain.rlp'), genesis: genesisOf(HIVE), batchBlocks: 64 });
  const head = JSON.parse(readFileSync(join(HIVE, 'headblock.json'), 'utf8')) as { hash: string; number: string };
  assert.deepEqual(result.head, { number: Number(head.number), hash: head.hash });
  assert.equal(result.imported, 601);
  const empty = blocksOf(HIVE).filter((block) => block.transactions.length === 0).length;
  assert.ok(empty > 0);
  assert.equal(result.receipts.stored, empty + 1, 'the genesis and every block without transactions');
  assert.equal(result.receipts.unavailable, 600 - empty);
  await withStore(dataDir, (store) => assert.equal(journalOps(store).length, 602));
});

test('a re-run of the same file changes nothing, and an interrupted import resumes where it stopped', async (t) => {
  const dir = tempDir(t, 'cdn-import-');
  const dataDir = join(dir, 'data');
  const blocks = blocksOf(EXEC);
  const first = await importChain(options(dataDir, { chainFile: writeChain(join(dir, 'first.rlp'), blocks.slice(0, 20)) }));
  assert.equal(first.imported, 21);
  assert.deepEqual(first.finalized, { number: 20, hash: hashHeader(blocks[19]!.header) });
  const rest = await importChain(options(dataDir));
  assert.equal(rest.imported, 34, 'blocks 21-54');
  assert.equal(rest.alreadyPresent, 20);
  const before = await withStore(dataDir, journalOps);
  const again = await importChain(options(dataDir));
  assert.equal(again.imported, 0);
  assert.equal(again.alreadyPresent, 54);
  assert.deepEqual(await withStore(dataDir, journalOps), before, 'the journal is untouched by the second run');
  assert.deepEqual(before.slice(-3), ['apply:53', 'apply:54', 'finalize:54']);
});

test('a corrupt chain file is refused with the block and the failed check named, and nothing is committed', async (t) => {
  const dir = tempDir(t, 'cdn-import-');
  const blocks = blocksOf(EXEC);
  const tampered = blocks.map((block, index) => (index === 29 ? { ...block, transactions: block.transactions.slice(1) } : block));
  const dataDir = join(dir, 'data');
  await assert.rejects(importChain(options(dataDir, { chainFile: writeChain(join(dir, 'bad-body.rlp'), tampered) })), (error: unknown) => {
    assert.ok(error instanceof ImportBlockError);
    assert.equal(error.blockNumber, 30);
    assert.match(error.message, /^block 30 \(0x[0-9a-f]{64}\): transactionsRoot does not match: expected 0x[0-9a-f]{64}, got 0x[0-9a-f]{64} \(chain file block #29\)$/);
    return true;
  });
  await withStore(dataDir, (store) => {
    assert.deepEqual(journalOps(store), [], 'no journal move');
    assert.equal(getCanonicalHash(store, 0), undefined, 'not even the genesis');
    assert.equal([...store.chain.headers.getKeys()].length, 0);
  });

  const bytes = readFileSync(join(EXEC, 'chain.rlp'));
  const truncated = join(dir, 'truncated.rlp');
  writeFileSync(truncated, bytes.subarray(0, bytes.length - 100));
  await assert.rejects(importChain(options(dataDir, { chainFile: truncated })), (error: unknown) => {
    assert.ok(error instanceof ChainFileError);
    assert.equal(error.index, 53);
    assert.match(error.message, /^chain file block #53 \(at byte \d+\): truncated: the block needs \d+ bytes, the file has \d+ left$/);
    return true;
  });

  const gap = join(dir, 'gap.rlp');
  writeChain(gap, [...blocks.slice(0, 10), ...blocks.slice(11)]);
  await assert.rejects(importChain(options(dataDir, { chainFile: gap })), /^ImportBlockError: block 12 \(0x[0-9a-f]{64}\): parentHash 0x[0-9a-f]{64} does not link to the preceding block 10 0x[0-9a-f]{64} \(chain file block #10\)$/);
  await withStore(dataDir, (store) => assert.deepEqual(journalOps(store), []));
});

test('a file of another chain, or one that contradicts the stored chain, is refused', async (t) => {
  const dir = tempDir(t, 'cdn-import-');
  const dataDir = join(dir, 'data');
  await importChain(options(dataDir, { chainFile: writeChain(join(dir, 'ten.rlp'), blocksOf(EXEC).slice(0, 10)) }));
  await assert.rejects(importChain({ dataDir, chainFile: join(HIVE, 'chain.rlp'), genesis: genesisOf(HIVE) }), (error: unknown) => {
    assert.ok(error instanceof ImportError);
    assert.match(error.message, /the store's genesis is 0x44fd89d5.* but the genesis file's is 0x[0-9a-f]{64}: this data directory holds another chain/);
    return true;
  });
  const fork = blocksOf(EXEC).slice(0, 10);
  fork[4] = { ...fork[4]!, header: { ...fork[4]!.header, extraData: '0x01' } };
  await assert.rejects(importChain(options(dataDir, { chainFile: writeChain(join(dir, 'fork.rlp'), fork) })), /^ImportBlockError: block 5 \(0x[0-9a-f]{64}\): conflicts with the stored canonical block 5 0x[0-9a-f]{64}; import does not reorganise the stored chain \(chain file block #4\)$/);
  const detached = join(dir, 'detached.rlp');
  writeChain(detached, blocksOf(EXEC).slice(11, 20));
  await assert.rejects(importChain(options(dataDir, { chainFile: detached })), /^ImportBlockError: block 12 \(0x[0-9a-f]{64}\): its parent \(block 11\) is neither in the file before it nor in the store, whose head is block 10 \(chain file block #0\)$/);
  await withStore(dataDir, (store) => assert.equal(journalOps(store).length, 12));
});

test('the import takes the data-directory write lock and refuses while another holder has it', async (t) => {
  const dataDir = join(tempDir(t, 'cdn-import-'), 'data');
  const lock = acquireDataDirLock(dataDir, 'node');
  try {
    await assert.rejects(importChain(options(dataDir)), DataDirLockedError);
  } finally {
    lock.release();
  }
  assert.equal((await importChain(options(dataDir))).imported, 55);
});

test('receipts given with the import are checked against each receiptsRoot and stored; wrong ones are refused', async (t) => {
  const dir = tempDir(t, 'cdn-import-');
  const recorded = recordedReceipts();
  assert.deepEqual(Object.keys(recorded).sort(), ['0x80e911b62f552f563a2544dfef5eb39ec8863d9082c998ca6b657f76e19de38e', EXEC_HEAD].sort(), 'blocks 1 and 54 are wholly recorded');

  const badData = join(dir, 'bad');
  const wrong = structuredClone(recorded);
  const first = wrong[EXEC_HEAD]![0] as { cumulativeGasUsed: string; gasUsed: string };
  first.cumulativeGasUsed = '0x1';
  await assert.rejects(importChain(options(badData, { receipts: parseReceiptsInput(wrong) })), (error: unknown) => {
    assert.ok(error instanceof ImportBlockError);
    assert.equal(error.blockNumber, 54);
    assert.match(error.message, /receiptsRoot does not match: expected 0x[0-9a-f]{64}, got 0x[0-9a-f]{64} \(the receipts given for it are wrong\)/);
    return true;
  });
  await withStore(badData, (store) => assert.deepEqual(journalOps(store), [], 'nothing committed'));

  const swapped = structuredClone(recorded);
  swapped[EXEC_HEAD] = swapped[EXEC_HEAD]!.slice(1);
  await assert.rejects(importChain(options(badData, { receipts: parseReceiptsInput(swapped) })), /block 54 .*: receipts of block 54 .*: 3 receipts for 4 transactions/);

  const dataDir = join(dir, 'good');
  const result = await importChain(options(dataDir, { receipts: parseReceiptsInput(recorded) }));
  assert.deepEqual(result.receipts, { stored: 3, unavailable: 52, added: 0, unmatched: 0 }, 'the genesis, block 1 (pre-Byzantium receipts with state roots) and block 54');
  await withStore(dataDir, (store) => {
    const receipts = decodeEth69Receipts(getReceiptsBytes(store, hexToBytes(EXEC_HEAD))!);
    assert.equal(receipts.length, 4);
    assert.equal(receipts.at(-1)!.cumulativeGasUsed, 0x52f71n, 'the header gasUsed');
  });

  const later = join(dir, 'later');
  await importChain(options(later));
  const added = await importChain(options(later, { receipts: parseReceiptsInput(recorded) }));
  assert.equal(added.imported, 0);
  assert.equal(added.receipts.added, 2, 'a re-run with receipts fills them in for blocks already imported');
  await withStore(later, (store) => assert.equal(decodeEth69Receipts(getReceiptsBytes(store, hexToBytes(EXEC_HEAD))!).length, 4));
});

test('without finalization the import records only apply moves, leaving finality to a backend', async (t) => {
  const dataDir = join(tempDir(t, 'cdn-import-'), 'data');
  const result = await importChain(options(dataDir, { finalize: false }));
  assert.equal(result.finalized, null);
  await withStore(dataDir, (store) => assert.deepEqual(journalOps(store), Array.from({ length: 55 }, (_, n) => `apply:${n}`)));
});

test('a transaction whose signature recovers no sender is refused, even when the transactions root is recomputed to match', async (t) => {
  const dir = tempDir(t, 'cdn-import-');
  const blocks = blocksOf(EXEC);
  const last = blocks.at(-1)!;
  const transactions = last.transactions.map((tx, index) => (index === 1 ? { ...tx, r: 0n } : tx));
  const header = { ...last.header, transactionsRoot: await transactionsRoot(transactions) };
  const file = writeChain(join(dir, 'bad-signature.rlp'), [...blocks.slice(0, -1), { ...last, header, transactions }]);
  const dataDir = join(dir, 'data');
  await assert.rejects(importChain(options(dataDir, { chainFile: file })), (error: unknown) => {
    assert.ok(error instanceof ImportBlockError);
    assert.equal(error.blockNumber, 54);
    assert.match(error.message, /: transaction 1 \(0x[0-9a-f]{64}\) has no valid sender: Invalid signature: .*\(chain file block #53\)$/);
    return true;
  });
  await withStore(dataDir, (store) => assert.deepEqual(journalOps(store), []));
});
