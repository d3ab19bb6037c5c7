/**
 * `node replay-rpc-server.js --chain mainnet|smoke [--length L] [--blocks N] [--advance 8] [--finality-lag 4]`: a JSON-RPC upstream that serves
 * the ingest bench's pre-generated chain (bench/ingest/chains.ts: mainnet-shaped blocks of ~200 transactions and 6
 * blob transactions, from the chain file in bench/cache/, generated first when missing) with every answer rendered
 * once into a file beside it (read on request). `--length` makes the chain longer than the shape's 1,024 blocks (its own
 * chain file: generating takes a few blocks a second). The backfill bench's `replay` chain (`CDN_BENCH_BACKFILL_CHAIN=replay`) uses it so
 * that the follower's blocks/s is the follower's: the devnet upstream builds a mainnet-shaped block a second (signing,
 * executing, blob commitments) and renders each answer on request, on the same two cores as the follower.
 *
 * The answers are the node's own JSON-RPC renderings (api/rpc: blocks with full transactions or hashes, receipts as
 * `eth_getBlockReceipts` answers, logs), so they are what an execution client answers for these blocks. The head
 * starts `advance` blocks below block N (default: the whole chain), moves a block a second up to N and stays there,
 * and finalized = head − lag. A follower needs those first moves: its cold backfill splits history from live at the
 * first finalized block it has recorded (actors/processor/cold-backfill.ts). Then nothing new arrives, so the
 * follower's live lane is idle and its CPU is the backfill's. The bench method `bench_rewindHead` starts those moves
 * again, for the next fresh follower. Methods: `eth_chainId`, `net_version`, `eth_syncing`, `eth_config`,
 * `eth_blockNumber`, `eth_getBlockByNumber` (numbers and tags), `eth_getBlockByHash`, `eth_getBlockReceipts` (number
 * or hash), `debug_getRawBlock` and `debug_getRawReceipts` (number or tag), `eth_getLogs` (block range or hash, address and topic filters, for Ponder), batches; any other method
 * answers -32601. Prints `{"port": P, …}` once listening.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { BlockView } from '../../api/rpc/block-view.js';
import { renderEthConfig } from '../../api/rpc/eth-config.js';
import { quantity } from '../../api/rpc/json-text.js';
import { renderBlock } from '../../api/rpc/render-block.js';
import { blockReceipts } from '../../api/rpc/render-receipt.js';
import { devnetForkSchedule } from '../../net/devnet/fork-schedule.js';
import { devnetGenesis } from '../../net/devnet/genesis.js';
import { splitBlockRlp } from '../../net/eth/block-parts.js';
import { encodeBlockBody } from '../../net/eth/block.js';
import { encodeHeader } from '../../net/eth/header.js';
import { bytesToHex, hexToBytes } from '../../net/eth/hex.js';
import { keccak256 } from '../../net/eth/keccak.js';
import { decodeEth69Receipts, encodeEth69Receipts, encodeReceipt } from '../../net/eth/receipt.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { readChainFile } from '../ingest/chain-file.js';
import { blockNumberOf } from './block-ref.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';

const { values } = parseArgs({ options: { chain: { type: 'string', default: 'mainnet' }, length: { type: 'string' }, blocks: { type: 'string' }, advance: { type: 'string', default: '8' }, 'finality-lag': { type: 'string', default: '4' } } });
const named = values.chain === 'smoke' ? SMOKE_CHAIN : values.chain === 'mainnet' ? MAINNET_SHAPED_CHAIN : undefined;
if (named === undefined) throw new Error(`replay-rpc-server --chain ${values.chain}: expected mainnet or smoke`);
// --length: a longer chain of the same shape (its own chain file; the first blocks are the same, the generator is seeded).
const length = values.length === undefined ? named.blocks : Number(values.length);
if (!Number.isSafeInteger(length) || length < named.blocks) throw new Error(`replay-rpc-server --length ${values.length}: expected an integer of at least ${named.blocks}`);
const shape = { ...named, blocks: length };
/**
 * The ingest chain's shape with every fork at genesis, as the backfill bench's devnet upstream has it: a follower
 * takes the schedule from `eth_config` alone only when nothing activated after genesis (else it needs a genesis.json).
 */
const chain = { ...shape, devnet: { ...shape.devnet, forks: { cancun: 0, prague: 0, osaka: 0, bpo1: 0 } } };
const finalityLag = Number(values['finality-lag']);
const advance = Number(values.advance);
const lastBlock = values.blocks === undefined ? chain.blocks : Number(values.blocks);
if (!Number.isSafeInteger(lastBlock) || lastBlock < 1 || lastBlock > chain.blocks) {
  throw new Error(`replay-rpc-server --blocks ${values.blocks}: expected an integer in 1..${chain.blocks} (the chain's length)`);
}
if (!Number.isSafeInteger(advance) || advance < 0 || advance >= lastBlock) throw new Error(`replay-rpc-server --advance ${values.advance}: expected an integer in 0..${lastBlock - 1}`);

/**
 * One block's answers, read from the answers file when asked (the page cache keeps them: a 10,000-block chain's
 * answers are ~7 GB, more than one buffer or a heap holds); its logs (for `eth_getLogs`, Ponder's reads) taken from
 * its receipts answer on first use.
 */
class Served {
  logs?: ReadonlyArray<{ readonly address: string; readonly topics: readonly string[]; readonly json: string }>;
  constructor(private readonly fd: number, private readonly parts: ReadonlyArray<readonly [number, number]>) {}
  get fullBlock(): Buffer { return this.read(0); }
  get block(): Buffer { return this.read(1); }
  get receipts(): Buffer { return this.read(2); }
  get bytes(): number { return this.parts[0]![1] + this.parts[2]![1]; }
  private read(part: number): Buffer {
    const [at, length] = this.parts[part]!;
    const out = Buffer.allocUnsafe(length);
    for (let done = 0; done < length;) done += readSync(this.fd, out, done, length - done, at + done);
    return out;
  }
}

const started = performance.now();
const cached = await cachedChain(chain, (done) => {
  if (done % 64 === 0) process.stderr.write(`replay-rpc-server: generating the chain file, ${done} of ${chain.blocks} blocks\n`);
});
const schedule = devnetForkSchedule(cached.config);
const genesis = devnetGenesis(cached.config);
const chainSpec = { schedule, genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp }, depositContractAddress: `0x${'00'.repeat(20)}` as const };

/**
 * Rendering costs minutes (every sender recovered, every transaction and receipt rendered), so the answers of the
 * whole chain are rendered once into a file beside the chain file and read back on later starts:
 *   file   = "CDNANSW1" · block*, from block 0
 *   block  = hash (32 bytes) · timestamp (u64 BE) · 3 × (length u32 BE · bytes): full block, block, receipts
 * written under a temporary name and renamed when whole.
 */
const answersPath = `${cached.path}.answers`;
const ANSWERS_MAGIC = Buffer.from('CDNANSW1', 'ascii');

async function renderAnswers(): Promise<void> {
  const temporary = `${answersPath}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, ANSWERS_MAGIC);
    const write = (view: BlockView) => {
      const head = Buffer.alloc(40);
      hexToBytes(view.hash).forEach((byte, i) => { head[i] = byte; });
      head.writeBigUInt64BE(BigInt(view.header.timestamp), 32);
      writeSync(fd, head);
      for (const part of [renderBlock(view, true), renderBlock(view, false), Buffer.from(`[${(blockReceipts(view, schedule) ?? []).join(',')}]`)]) {
        const length = Buffer.alloc(4);
        length.writeUInt32BE(part.length);
        writeSync(fd, length);
        writeSync(fd, part);
      }
    };
    const emptyBody = encodeBlockBody({ transactions: [], uncles: [], ...(genesis.header.withdrawalsRoot === undefined ? {} : { withdrawals: [] }) });
    write(new BlockView({ hash: hexToBytes(genesis.hash), number: 0, header: encodeHeader(genesis.header), body: emptyBody, receipts: encodeEth69Receipts([]) }));
    let number = 0;
    for await (const record of readChainFile(cached.path)) {
      number += 1;
      const parts = splitBlockRlp(record.block);
      write(new BlockView({ hash: keccak256(parts.header), number, header: parts.header, body: parts.body, receipts: record.receipts }));
      if (number % 64 === 0) process.stderr.write(`replay-rpc-server: rendering the answers, ${number} of ${cached.blocks} blocks\n`);
    }
    closeSync(fd);
    renameSync(temporary, answersPath);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
}

if (!existsSync(answersPath)) await renderAnswers();
const served: Served[] = [];
const numberByHash = new Map<string, number>();
const timestamps: number[] = [];
{
  // An index of the file (each block's hash, timestamp and where its three answers lie), read head by head.
  const fd = openSync(answersPath, 'r');
  const size = fstatSync(fd).size;
  const head = Buffer.alloc(40);
  const readAt = (buffer: Buffer, at: number) => { for (let done = 0; done < buffer.length;) done += readSync(fd, buffer, done, buffer.length - done, at + done); };
  readAt(head.subarray(0, 8), 0);
  if (!head.subarray(0, 8).equals(ANSWERS_MAGIC)) throw new Error(`${answersPath}: not an answers file; delete it and it is rendered again`);
  const lengthBytes = Buffer.alloc(4);
  for (let at = 8, number = 0; at < size && number <= lastBlock; number += 1) {
    readAt(head, at);
    numberByHash.set(`0x${head.toString('hex', 0, 32)}`, number);
    timestamps[number] = Number(head.readBigUInt64BE(32));
    at += 40;
    const parts: Array<readonly [number, number]> = [];
    for (let i = 0; i < 3; i += 1) {
      readAt(lengthBytes, at);
      const length = lengthBytes.readUInt32BE(0);
      parts.push([at + 4, length]);
      at += 4 + length;
    }
    served.push(new Served(fd, parts));
  }
}
if (served.length <= lastBlock) throw new Error(`${answersPath} holds ${served.length - 1} blocks, fewer than --blocks ${lastBlock}`);

/**
 * The raw getters' answers (`debug_getRawBlock`: the block's RLP; `debug_getRawReceipts`: each receipt's consensus
 * encoding), rendered at start from the chain file, as an execution client serves them to a follower whose history
 * source asks for raw blocks (net/history/raw-batch.ts).
 */
const rawServed: Array<{ readonly block: Buffer; readonly receipts: Buffer }> = [];
{
  const hexString = (bytes: Uint8Array) => `"0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex')}"`;
  const render = (block: Uint8Array, receipts: Uint8Array) => ({
    block: Buffer.from(hexString(block)),
    receipts: Buffer.from(`[${decodeEth69Receipts(receipts).map((receipt) => hexString(encodeReceipt(receipt))).join(',')}]`),
  });
  const emptyBody = encodeBlockBody({ transactions: [], uncles: [], ...(genesis.header.withdrawalsRoot === undefined ? {} : { withdrawals: [] }) });
  rawServed.push(render(new BlockView({ hash: hexToBytes(genesis.hash), number: 0, header: encodeHeader(genesis.header), body: emptyBody, receipts: undefined }).rawBlock(), encodeEth69Receipts([])));
  for await (const record of readChainFile(cached.path)) {
    if (rawServed.length > lastBlock) break;
    rawServed.push(render(record.block, record.receipts));
  }
}

function logsIn(block: Served): NonNullable<Served['logs']> {
  block.logs ??= (JSON.parse(block.receipts.toString('utf8')) as Array<{ logs: Array<{ address: string; topics: string[] }> }>).flatMap((receipt) => receipt.logs.map((log) => ({
    address: log.address.toLowerCase(), topics: log.topics.map((topic) => topic.toLowerCase()), json: JSON.stringify(log),
  })));
  return block.logs;
}
const startSeconds = (performance.now() - started) / 1000;
let listening = performance.now();

/** The head: `advance` blocks below the last at start, one more a second, up to the last. */
function head(): number {
  return Math.min(lastBlock, lastBlock - advance + Math.floor((performance.now() - listening) / 1000));
}

/** The number of a block by tag, quantity or hash; null when the chain has none. */
function numberOf(ref: unknown): number | null {
  return blockNumberOf(ref, head(), finalityLag, (hash) => numberByHash.get(hash) ?? null);
}

class RpcFailure extends Error {
  constructor(readonly code: number, message: string) { super(message); }
}

/** `eth_getLogs` over a block range (or one block by hash), filtered by address and topics as clients do. */
function logsOf(filter: unknown): Buffer {
  const f = (filter ?? {}) as { fromBlock?: unknown; toBlock?: unknown; blockHash?: unknown; address?: unknown; topics?: unknown };
  const from = f.blockHash !== undefined ? numberOf(f.blockHash) : numberOf(f.fromBlock ?? 'latest');
  const to = f.blockHash !== undefined ? from : numberOf(f.toBlock ?? 'latest');
  if (from === null || to === null) throw new RpcFailure(-32000, 'unknown block');
  const addresses = f.address === undefined || f.address === null ? null : new Set((Array.isArray(f.address) ? f.address : [f.address]).map((a) => String(a).toLowerCase()));
  const topics = (Array.isArray(f.topics) ? f.topics : []).map((t: unknown) => (t === null ? null : new Set((Array.isArray(t) ? t : [t]).map((x) => String(x).toLowerCase()))));
  const out: string[] = [];
  for (let n = from; n <= to; n += 1) {
    for (const log of logsIn(served[n]!)) {
      if (addresses !== null && !addresses.has(log.address)) continue;
      if (topics.some((wanted, i) => wanted !== null && !wanted.has(log.topics[i] ?? ''))) continue;
      out.push(log.json);
    }
  }
  return Buffer.from(`[${out.join(',')}]`);
}

/** The JSON of one method's result. */
function result(method: unknown, params: unknown[]): Buffer | string {
  switch (method) {
    case 'eth_chainId': return quantity(cached.config.chainId);
    case 'net_version': return `"${cached.config.chainId}"`;
    case 'eth_syncing': return 'false';
    case 'eth_blockNumber': return quantity(head());
    case 'eth_config': return renderEthConfig(chainSpec, timestamps[head()]!)!;
    case 'eth_getBlockByNumber':
    case 'eth_getBlockByHash': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : params[1] === true ? served[number]!.fullBlock : served[number]!.block;
    }
    case 'eth_getBlockReceipts': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : served[number]!.receipts;
    }
    case 'eth_getLogs': return logsOf(params[0]);
    case 'debug_getRawBlock': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : rawServed[number]!.block;
    }
    case 'debug_getRawReceipts': {
      const number = numberOf(params[0]);
      return number === null ? 'null' : rawServed[number]!.receipts;
    }
    case 'bench_rewindHead':
      listening = performance.now();
      return quantity(head());
    default: throw new RpcFailure(-32601, `the method ${String(method)} does not exist/is not available`);
  }
}

function answer(request: unknown): Buffer[] {
  const { id = null, method, params = [] } = (request ?? {}) as { id?: unknown; method?: unknown; params?: unknown[] };
  try {
    const value = result(method, Array.isArray(params) ? params : []);
    return [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`), typeof value === 'string' ? Buffer.from(value) : value, Buffer.from('}')];
  } catch (error) {
    const code = error instanceof RpcFailure ? error.code : -32603;
    return [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"error":${JSON.stringify({ code, message: (error as Error).message })}}`)];
  }
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    let parts: Buffer[];
    try {
      const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
      parts = Array.isArray(parsed)
        ? [Buffer.from('['), ...parsed.flatMap((request, i) => (i === 0 ? answer(request) : [Buffer.from(','), ...answer(request)])), Buffer.from(']')]
        : answer(parsed);
    } catch {
      parts = [Buffer.from('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}')];
    }
    const body = Buffer.concat(parts);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
}

const server = createServer({ keepAliveTimeout: 60_000 }, handle);
server.listen(0, '127.0.0.1', () => {
  listening = performance.now();
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('replay-rpc-server cannot listen');
  const bytes = served.reduce((sum, s) => sum + s.bytes, 0);
  process.stdout.write(`${JSON.stringify({ port: address.port, blocks: lastBlock, genesis: genesis.hash, startSeconds, servedMiB: bytes / 2 ** 20 })}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
});
