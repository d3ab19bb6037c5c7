/**
 * `node synthetic-rpc-server.js --blocks N`: a JSON-RPC upstream that renders cheap but valid blocks on the fly, for
 * the backfill bench's long ranges (`CDN_BENCH_BACKFILL_CHAIN=synthetic`: 100k and 1M-block jobs, which the devnet
 * upstream would take hours to build). Its own process on loopback, so the follower's CPU and memory are its own.
 *
 * The chain: the devnet's genesis (default seed, chain id 1337, every fork at genesis — the same genesis and
 * `eth_config` as the backfill bench's devnet upstream), then empty blocks (no transactions, withdrawals or blobs)
 * one second apart, each header built and hashed as the devnet's would be: parent hash, EIP-1559 base fee evolving
 * from the parent (1 gwei down to its floor of 7 wei for empty blocks), empty transactions, receipts and withdrawals
 * roots, zero blob gas, the Prague requests hash, and a state root that chains like the devnet's (`nextStateRoot`).
 * So a follower verifies every block exactly as any other (hash, parent link, roots, bloom, gas). Only the block
 * hashes and state roots are kept, as compact 32-byte arrays computed by chaining at start (about 64 MB for 1M blocks);
 * headers and their JSON are rebuilt per request.
 *
 * The head starts at block N and advances one block a second (as the devnet upstream serving its cached chain does),
 * so a follower's finality reaches the blocks it recorded; finalized = head − 4. Methods: `eth_chainId`,
 * `eth_config`, `eth_blockNumber`, `net_version`, `eth_syncing`, `eth_getBlockByNumber` (numbers and the tags
 * latest/pending/safe/finalized/earliest), `eth_getBlockByHash`, `eth_getBlockReceipts` (by number or hash; `[]`),
 * batches; any other method answers JSON-RPC error -32601. Prints `{"port": P}` once listening.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { renderEthConfig } from '../../api/rpc/eth-config.js';
import { array, quantity } from '../../api/rpc/json-text.js';
import { headerFields } from '../../api/rpc/render-header.js';
import { nextBaseFee } from '../../net/devnet/base-fee.js';
import { resolveDevnetConfig } from '../../net/devnet/config.js';
import { devnetForkSchedule } from '../../net/devnet/fork-schedule.js';
import { devnetGenesis, nextStateRoot } from '../../net/devnet/genesis.js';
import { encodeHeader, encodeRlp, headerToRlp, keccak256, EMPTY_TRIE_ROOT, type BlockHeader, type Hash } from '../../net/eth/index.js';
import { blockNumberOf } from './block-ref.js';

const { values } = parseArgs({ options: { blocks: { type: 'string' }, 'finality-lag': { type: 'string', default: '4' } } });
const startBlocks = Number(values.blocks);
const finalityLag = Number(values['finality-lag']);
if (!Number.isSafeInteger(startBlocks) || startBlocks < 8) throw new Error(`synthetic-rpc-server --blocks ${values.blocks}: expected an integer ≥ 8`);

/** The backfill bench's devnet upstream: default seed and chain id, every fork at genesis, 1 s blocks. */
const config = resolveDevnetConfig({
  blockTimeMs: 1000, reorgEvery: 0, finalityLag, transactionsPerBlock: 0, blobTransactionsPerBlock: 0,
  forks: { cancun: 0, prague: 0, osaka: 0, bpo1: 0 },
});
const schedule = devnetForkSchedule(config);
const genesis = devnetGenesis(config);
const chainSpec = { schedule, genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp }, depositContractAddress: `0x${'00'.repeat(20)}` as const };
/** Base fee of an empty block after block 0: falls by 1/8 a block from 1 gwei to 7 wei, then stays. */
const baseFees: bigint[] = [genesis.header.baseFeePerGas!];

/** Block hashes and state roots, 32 bytes each, block n at offset 32n; grown by doubling as the head advances. */
let hashes = Buffer.alloc(32 * (startBlocks + 1 + 65_536));
let stateRoots = Buffer.alloc(hashes.length);
let known = 0;

function baseFeeOf(number: number): bigint {
  while (baseFees.length <= number) {
    const parent = baseFees[baseFees.length - 1]!;
    const next = nextBaseFee({ gasLimit: config.gasLimit, gasUsed: 0n, baseFeePerGas: parent });
    if (next === parent) return parent;
    baseFees.push(next);
  }
  return baseFees[number]!;
}

function slot(buffer: Buffer, number: number): Hash {
  return `0x${buffer.toString('hex', 32 * number, 32 * number + 32)}` as Hash;
}

/** The header of block `number` (≥ 1), from its parent's hash and state root (already known). */
function headerOf(number: number): BlockHeader {
  if (number === 0) return genesis.header;
  return {
    ...genesis.header,
    parentHash: slot(hashes, number - 1),
    stateRoot: slot(stateRoots, number),
    number,
    timestamp: genesis.header.timestamp + number,
    baseFeePerGas: baseFeeOf(number),
  };
}

/** Extends the hash chain to block `to`. */
function extendTo(to: number): void {
  if (known === 0 && to >= 0) {
    Buffer.from(genesis.hash.slice(2), 'hex').copy(hashes, 0);
    Buffer.from(genesis.header.stateRoot.slice(2), 'hex').copy(stateRoots, 0);
  }
  if (32 * (to + 1) > hashes.length) {
    const grown = Buffer.alloc(Math.max(hashes.length * 2, 32 * (to + 1)));
    hashes.copy(grown);
    hashes = grown;
    const grownRoots = Buffer.alloc(grown.length);
    stateRoots.copy(grownRoots);
    stateRoots = grownRoots;
  }
  for (let n = known + 1; n <= to; n += 1) {
    const root = nextStateRoot(slot(stateRoots, n - 1), EMPTY_TRIE_ROOT, EMPTY_TRIE_ROOT, EMPTY_TRIE_ROOT);
    Buffer.from(root.slice(2), 'hex').copy(stateRoots, 32 * n);
    Buffer.from(keccak256(encodeHeader(headerOf(n)))).copy(hashes, 32 * n);
  }
  if (to > known) known = to;
}

let started = performance.now();
function head(): number {
  const number = startBlocks + Math.floor((performance.now() - started) / 1000);
  if (number > known) extendTo(number);
  return number;
}

/** The block's JSON as `eth_getBlockBy*` renders it (transactions, uncles and withdrawals empty either way). */
function blockJson(number: number): string {
  const header = headerOf(number);
  const size = encodeRlp([headerToRlp(header), [], [], []]).length;
  const extra: Array<[string, string]> = [['size', quantity(size)], ['transactions', '[]'], ['uncles', '[]'], ['withdrawals', '[]']];
  return `{${headerFields(header, slot(hashes, number), extra).map(([name, value]) => `"${name}":${value}`).join(',')}}`;
}

/** The number of a block by tag, quantity or hash; null when the chain has none. */
function numberOf(ref: unknown): number | null {
  return blockNumberOf(ref, head(), finalityLag, numberOfHash);
}

/** The number of the block with this hash (lower-case 0x hex), by a search of the hash chain. */
function numberOfHash(hash: string): number | null {
  const wanted = Buffer.from(hash.slice(2), 'hex');
  for (let at = hashes.indexOf(wanted); at >= 0 && at < 32 * (known + 1); at = hashes.indexOf(wanted, at + 1)) {
    if (at % 32 === 0) return at / 32;
  }
  return null;
}

class RpcFailure extends Error {
  constructor(readonly code: number, message: string) { super(message); }
}

/** The JSON text of one method's result. */
function result(method: unknown, params: unknown[]): string {
  switch (method) {
    case 'eth_chainId': return quantity(config.chainId);
    case 'net_version': return `"${config.chainId}"`;
    case 'eth_syncing': return 'false';
    case 'eth_blockNumber': return quantity(head());
    case 'eth_config': return renderEthConfig(chainSpec, genesis.header.timestamp + head())!;
    case 'eth_getBlockByNumber':
    case 'eth_getBlockByHash': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : blockJson(number);
    }
    case 'eth_getBlockReceipts': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : array([]);
    }
    default: throw new RpcFailure(-32601, `the method ${String(method)} does not exist/is not available`);
  }
}

function answer(request: unknown): string {
  const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown[] };
  try {
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result(method, Array.isArray(params) ? params : [])}}`;
  } catch (error) {
    const code = error instanceof RpcFailure ? error.code : -32603;
    return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify({ code, message: (error as Error).message })}}`;
  }
}

function serve(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let body: string;
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      body = Array.isArray(parsed) ? `[${parsed.map(answer).join(',')}]` : answer(parsed);
    } catch {
      body = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}';
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
}

const chainStart = performance.now();
extendTo(startBlocks);
const chainSeconds = (performance.now() - chainStart) / 1000;
started = performance.now();
const server = createServer({ keepAliveTimeout: 60_000 }, serve);
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('synthetic-rpc-server cannot listen');
  process.stdout.write(`${JSON.stringify({ port: address.port, blocks: startBlocks, genesis: genesis.hash, chainSeconds })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
