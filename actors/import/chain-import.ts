/**
 * `chain-node import`: ingests a chain file into a data directory's store the way the live node records blocks —
 * verified material in the chain tables and `apply` moves in the chain journal (one LMDB transaction per batch, so
 * material and journal never disagree) — so a later `chain-node start` serves it and its processors process it.
 *
 * Two passes. The first reads the whole file and verifies every block without writing anything: decodable, parent
 * linked (to the previous block, or to the stored chain or the genesis from genesis.json), body roots against the
 * header (`verifyBlockMaterialBytes` on the block's bytes as the file holds them), header fields against the parent and the fork schedule, and receipts given with
 * `--receipts` against `receiptsRoot`, and every transaction's signature (it must recover a sender, as serving
 * `from` needs). A bad file therefore commits nothing and the error names the block and what
 * failed. The second pass writes in batches; an interrupted import leaves whole batches, and a re-run skips the
 * blocks already canonical (a second run of the same file changes nothing) and carries on.
 *
 * The import only extends the stored canonical chain; a block that contradicts it is refused (no reorgs through
 * import). Receipts: a chain file has none. A block without transactions has the empty receipt list (checked
 * against its receipts root); any other block's receipts come only from `--receipts` and are otherwise recorded as
 * unavailable (no receipts entry), never invented. By default the last imported block is finalized (the operator
 * vouches for the file); `finalize: false` leaves finality to a finality backend.
 */
import { mkdirSync } from 'node:fs';
import { encodeBlockBody, type Block } from '../../net/eth/block.js';
import { BlockVerificationError, InvalidSignatureError } from '../../net/eth/errors.js';
import { isForkActive } from '../../net/eth/fork-schedule.js';
import type { ParsedGenesis } from '../../net/eth/genesis.js';
import { buildGenesisBlock } from '../../net/eth/genesis-state.js';
import { decodeHeader, encodeHeader, hashHeader, type BlockHeader } from '../../net/eth/header.js';
import { bytesToHex, hexToBytes, type Hash } from '../../net/eth/hex.js';
import { encodeEth69Receipts, type Receipt } from '../../net/eth/receipt.js';
import { hashTransaction } from '../../net/eth/transaction-encode.js';
import { recoverAddress } from '../../net/eth/signature.js';
import { typedSigningHash } from '../../net/eth/transaction-raw.js';
import { recoverTransactionSender } from '../../net/eth/transaction-sender.js';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { verifyBlockMaterialBytes } from '../../net/eth/verify-material.js';
import { getCanonicalHash, getHeaderBytes, getReceiptsBytes, putBlockMaterial, type BlockMaterial } from '../../store/chain-material.js';
import { openStore, type Store } from '../../store/store.js';
import { acquireDataDirLock } from '../../store/lock.js';
import { commitFinalized, loadChainState, writeHeadPlan, type ChainState } from '../chain/journal-writer.js';
import type { BlockRef } from '../../store/chain-types.js';
import { readChainFile } from './chain-file.js';
import { ImportBlockError, ImportError, ReceiptsFileError } from './errors.js';
import { headerLinkFailure } from './header-link.js';
import { matchReceipts, receiptsJsonFor, type ReceiptsInput } from './receipts-file.js';

export interface ImportOptions {
  readonly dataDir: string;
  readonly chainFile: string;
  readonly genesis: ParsedGenesis;
  readonly receipts?: ReceiptsInput | null;
  /** Blocks per write transaction (default 256). */
  readonly batchBlocks?: number;
  /** Finalize the last block of the file (default true). */
  readonly finalize?: boolean;
  /** Called after each committed batch. */
  readonly onProgress?: (progress: { readonly committed: number; readonly total: number; readonly head: BlockRef }) => void;
}

export interface ImportResult {
  readonly dataDir: string;
  readonly chainId: string;
  readonly genesisHash: Hash;
  readonly blocksInFile: number;
  /** Blocks newly made canonical (the genesis included when it was written). */
  readonly imported: number;
  /** Blocks of the file that were already canonical. */
  readonly alreadyPresent: number;
  readonly head: BlockRef | null;
  readonly finalized: BlockRef | null;
  readonly receipts: {
    /** Imported blocks whose receipts were stored (from the receipts file, or the empty list of a block without transactions). */
    readonly stored: number;
    /** Imported blocks with transactions and no receipts given: recorded as unavailable. */
    readonly unavailable: number;
    /** Already-present blocks that had no receipts and got them from the receipts file. */
    readonly added: number;
    /** Blocks named by the receipts file that are not in the chain file. */
    readonly unmatched: number;
  };
}

/** What pass one decided for one block of the file. */
type Disposition = 'present' | 'append' | 'add-receipts' | 'genesis';

interface Plan {
  readonly genesis: { readonly header: BlockHeader; readonly hash: Hash } | null;
  readonly hashes: Hash[];
  readonly dispositions: Disposition[];
  readonly withReceipts: boolean[];
  /** The file's last block. */
  last: BlockRef | null;
  unmatchedReceipts: number;
}

const DEFAULT_BATCH = 256;

export async function importChain(options: ImportOptions): Promise<ImportResult> {
  const chainId = options.genesis.chainId;
  if (chainId > BigInt(Number.MAX_SAFE_INTEGER) || chainId <= 0n) throw new ImportError(`genesis chain id ${chainId} is not a positive safe integer`);
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const lock = acquireDataDirLock(options.dataDir, 'import');
  try {
    const store = openStore({ dataDir: options.dataDir, chainId: Number(chainId) });
    try {
      const genesis = buildGenesisBlock(options.genesis);
      const chain = loadChainState(store);
      const plan = await verifyFile(store, chain, options, genesis);
      const written = await writeBlocks(store, chain, options, plan);
      const last = plan.last;
      if (options.finalize !== false && last !== null && (chain.finalized === null || chain.finalized.number < last.number)) {
        await commitFinalized(store, chain, last);
      }
      return {
        dataDir: options.dataDir,
        chainId: chainId.toString(),
        genesisHash: genesis.hash,
        blocksInFile: plan.hashes.length,
        imported: written.imported,
        alreadyPresent: plan.dispositions.filter((d) => d === 'present' || d === 'add-receipts').length,
        head: chain.head,
        finalized: chain.finalized,
        receipts: { stored: written.receiptsStored, unavailable: written.imported - written.receiptsStored, added: written.receiptsAdded, unmatched: plan.unmatchedReceipts },
      };
    } finally {
      await store.close();
    }
  } finally {
    lock.release();
  }
}

/** The stored header of the canonical block at `number`, or undefined. */
function storedCanonicalHeader(store: Store, number: number): { header: BlockHeader; hash: Hash } | undefined {
  const hash = getCanonicalHash(store, number);
  if (!hash) return undefined;
  const bytes = getHeaderBytes(store, hash);
  if (!bytes) throw new ImportError(`the store's canonical block ${number} (${bytesToHex(hash)}) has no recorded header; run \`chain-node db verify\``);
  return { header: decodeHeader(bytes), hash: bytesToHex(hash) };
}

/** Pass one: verify every block and decide what to do with it; writes nothing. */
async function verifyFile(store: Store, chain: ChainState, options: ImportOptions, genesis: { header: BlockHeader; hash: Hash }): Promise<Plan> {
  const storedGenesis = storedCanonicalHeader(store, 0);
  if (storedGenesis && storedGenesis.hash !== genesis.hash) {
    throw new ImportError(`the store's genesis is ${storedGenesis.hash} but the genesis file's is ${genesis.hash}: this data directory holds another chain`);
  }
  if (chain.head !== null && chain.anchor !== 0) {
    throw new ImportError(`the store's canonical chain starts at block ${chain.anchor}, not at genesis; import only extends a chain that starts at genesis (use an empty data directory)`);
  }
  const plan: Plan = { genesis: chain.head === null ? genesis : null, hashes: [], dispositions: [], withReceipts: [], last: null, unmatchedReceipts: 0 };
  let head: { number: number; header: BlockHeader; hash: Hash } = chain.head === null
    ? { number: 0, header: genesis.header, hash: genesis.hash }
    : { number: chain.head.number, ...storedCanonicalHeader(store, chain.head.number)! };
  let parent: { header: BlockHeader; hash: Hash } | null = null;
  const usedReceiptKeys = new Set<string>();

  for (const { block, index, bytes } of readChainFile(options.chainFile)) {
    const number = block.header.number;
    const hash = hashHeader(block.header);
    const fail = (detail: string): never => { throw new ImportBlockError(number, hash, `${detail} (chain file block #${index})`); };
    if (number === 0) {
      if (index !== 0) fail('a genesis block can only be the first block of the file');
      if (hash !== genesis.hash) fail(`the file's genesis differs from the genesis file's ${genesis.hash}`);
      plan.hashes.push(hash);
      plan.dispositions.push(plan.genesis ? 'genesis' : 'present');
      plan.withReceipts.push(true);
      plan.last = { number, hash };
      parent = { header: block.header, hash };
      continue;
    }
    parent ??= storedOrGenesisParent(store, chain, genesis, number) ?? fail(`its parent (block ${number - 1}) is neither in the file before it nor in the store, whose head is block ${head.number}`);
    if (block.header.parentHash !== parent.hash) fail(`parentHash ${block.header.parentHash} does not link to the preceding block ${parent.header.number} ${parent.hash}`);
    const linkFailure = headerLinkFailure(options.genesis.schedule, block.header, parent.header);
    if (linkFailure !== null) fail(linkFailure);

    const receipts = blockReceipts(block, hash, options.receipts ?? null, usedReceiptKeys, fail);
    if (number !== parent.header.number + 1) fail(`number does not match: expected ${parent.header.number + 1}, got ${number}`);
    let encodings: Uint8Array[];
    try {
      // Hash, uncles, transactions/withdrawals/receipts roots, bloom, blob gas and gas used, from the file's bytes.
      const { header, body } = splitBlockRlp(bytes);
      encodings = verifyBlockMaterialBytes({ header, body, receipts: receipts !== null ? encodeEth69Receipts(receipts) : null, expectedHash: hash }).transactions;
    } catch (error) {
      if (error instanceof BlockVerificationError) fail(`${error.field} does not match: expected ${error.expected}, got ${error.actual}${isReceiptField(error.field) && receipts !== null && block.transactions.length > 0 ? ' (the receipts given for it are wrong)' : ''}`);
      throw error;
    }
    block.transactions.forEach((tx, txIndex) => {
      try {
        // A typed transaction's signing hash comes from its verified bytes; a legacy one's from the object (EIP-155).
        if (tx.type === 'legacy') recoverTransactionSender(tx);
        else recoverAddress(typedSigningHash(encodings[txIndex]!), tx);
      } catch (error) {
        if (error instanceof InvalidSignatureError) fail(`transaction ${txIndex} (${hashTransaction(tx)}) has no valid sender: ${error.message}`);
        throw error;
      }
    });

    const canonical = getCanonicalHash(store, number);
    let disposition: Disposition;
    if (canonical) {
      if (bytesToHex(canonical) !== hash) fail(`conflicts with the stored canonical block ${number} ${bytesToHex(canonical)}; import does not reorganise the stored chain`);
      disposition = receipts !== null && block.transactions.length > 0 && !getReceiptsBytes(store, hexToBytes(hash)) ? 'add-receipts' : 'present';
    } else {
      if (number !== head.number + 1) fail(`does not extend the stored chain, whose head is block ${head.number}`);
      disposition = 'append';
      head = { number, header: block.header, hash };
    }
    plan.hashes.push(hash);
    plan.dispositions.push(disposition);
    plan.withReceipts.push(receipts !== null);
    plan.last = { number, hash };
    parent = { header: block.header, hash };
  }
  if (options.receipts) plan.unmatchedReceipts = options.receipts.size - usedReceiptKeys.size;
  return plan;
}

function isReceiptField(field: string): boolean {
  return field === 'receiptsRoot' || field === 'logsBloom' || field === 'gasUsed' || field === 'receiptCount';
}

/** The parent of the file's first block: the stored canonical block, or the genesis when the store is empty. */
function storedOrGenesisParent(store: Store, chain: ChainState, genesis: { header: BlockHeader; hash: Hash }, number: number): { header: BlockHeader; hash: Hash } | undefined {
  if (chain.head === null) return number === 1 ? genesis : undefined;
  return storedCanonicalHeader(store, number - 1);
}

/** The block's receipts: from the receipts input, the empty list for a block without transactions, else null. */
function blockReceipts(block: Block, hash: Hash, input: ReceiptsInput | null, used: Set<string>, fail: (detail: string) => never): Receipt[] | null {
  const json = input ? receiptsJsonFor(input, block.header.number, hash) : undefined;
  if (json !== undefined) {
    used.add(input!.byHash.has(hash.toLowerCase()) ? hash.toLowerCase() : String(block.header.number));
    try {
      return matchReceipts(block, hash, json);
    } catch (error) {
      if (error instanceof ReceiptsFileError) fail(error.message);
      throw error;
    }
  }
  return block.transactions.length === 0 ? [] : null;
}

/** Pass two: write the planned blocks in batches, material and journal moves in one transaction each. */
async function writeBlocks(store: Store, chain: ChainState, options: ImportOptions, plan: Plan): Promise<{ imported: number; receiptsStored: number; receiptsAdded: number }> {
  const batchSize = options.batchBlocks ?? DEFAULT_BATCH;
  const total = plan.dispositions.filter((d) => d === 'append' || d === 'add-receipts').length + (plan.genesis ? 1 : 0);
  let imported = 0;
  let receiptsStored = 0;
  let receiptsAdded = 0;
  let committed = 0;
  let materials: BlockMaterial[] = [];
  let applies: BlockRef[] = [];

  const flush = async () => {
    if (materials.length === 0) return;
    const [batch, moves] = [materials, applies];
    materials = [];
    applies = [];
    let sequence = chain.sequence;
    await store.write(() => {
      for (const material of batch) putBlockMaterial(store, material);
      sequence = writeHeadPlan(store, sequence, { undo: [], apply: moves });
    });
    chain.sequence = sequence;
    const last = moves.at(-1);
    if (last) {
      chain.head = last;
      chain.anchor ??= moves[0]!.number;
    }
    committed += batch.length;
    if (chain.head) options.onProgress?.({ committed, total, head: chain.head });
  };

  if (plan.genesis) {
    const shanghai = isForkActive(options.genesis.schedule, 'shanghai', { number: 0, timestamp: plan.genesis.header.timestamp });
    materials.push({
      number: 0, hash: hexToBytes(plan.genesis.hash), header: encodeHeader(plan.genesis.header),
      body: encodeBlockBody({ transactions: [], uncles: [], ...(shanghai ? { withdrawals: [] } : {}) }),
      receipts: encodeEth69Receipts([]),
    });
    applies.push({ number: 0, hash: plan.genesis.hash });
    imported += 1;
    receiptsStored += 1;
  }
  for (const { block, index } of readChainFile(options.chainFile)) {
    const hash = hashHeader(block.header);
    if (plan.hashes[index] !== hash) throw new ImportError(`chain file block #${index} changed between the verification pass and the write pass; re-run the import`);
    const disposition = plan.dispositions[index]!;
    if (disposition === 'present' || disposition === 'genesis') continue;
    const receipts = plan.withReceipts[index] ? blockReceipts(block, hash, options.receipts ?? null, new Set(), (detail) => { throw new ImportError(detail); }) : null;
    if (disposition === 'add-receipts') {
      materials.push(materialOf(block, hash, receipts));
      receiptsAdded += 1;
    } else {
      materials.push(materialOf(block, hash, receipts));
      applies.push({ number: block.header.number, hash });
      imported += 1;
      if (receipts !== null) receiptsStored += 1;
    }
    if (materials.length >= batchSize) await flush();
  }
  await flush();
  return { imported, receiptsStored, receiptsAdded };
}

function materialOf(block: Block, hash: Hash, receipts: readonly Receipt[] | null): BlockMaterial {
  return {
    number: block.header.number,
    hash: hexToBytes(hash),
    header: encodeHeader(block.header),
    body: encodeBlockBody(block),
    receipts: receipts ? encodeEth69Receipts(receipts) : null,
  };
}
