/**
 * A serving peer of the backfill workload's p2p history source (`CDN_BENCH_BACKFILL_SOURCE=p2p`), one per process so
 * each peer's CPU is its own: `node history-peers.js --chain mainnet|smoke [--length L] [--blocks N] [--advance A]` serves blocks
 * 0..N of the ingest bench's chain file (bench/cache/, every fork at genesis: the chain the replay JSON-RPC server
 * serves, so the rpc baseline of the same run backfills the same blocks) over RLPx/eth on 127.0.0.1, announcing
 * 0..N as its range. Only an index is held (each block's offsets in the file and its hash); headers, bodies and
 * receipts are read from the file when asked (the page cache keeps them: four peers share one copy). Prints
 * `{"enode": …, "chainId": …, "genesis": …, "tip": N}` once listening, then serves until it is signalled (its CPU is read
 * from /proc by the bench); standard input takes `go` and `rewind` (the head's moves, below).
 * `--beacon-api`: this peer also serves the chain's consensus side as the devnet does (`devnet.beacon_api`,
 * net/devnet/beacon-server.ts: beacon slot n carries block n, light-client objects signed by the devnet's sync
 * committee for the chain's seed) on a free loopback port, over the headers it serves, its head the served head;
 * its URL is printed as `beaconApi`. A follower's `finality.kind = "beacon_api"` (light-client proof) reads it.
 */
import { fstatSync, openSync, readSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { devnetForkSchedule, devnetGenesis } from '../../net/devnet/index.js';
import { encodeBlockBody } from '../../net/eth/block.js';
import { decodeHeader, encodeHeader } from '../../net/eth/header.js';
import type { Hash } from '../../net/eth/hex.js';
import { keccak256Hex } from '../../net/eth/keccak.js';
import { encodeEth69Receipts } from '../../net/eth/receipt.js';
import { listPrefixLength, rlpSpan, writeListPrefix } from '../../net/eth/rlp-walk.js';
import { formatEnode } from '../../net/p2p/enode.js';
import { EthHost } from '../../net/p2p/host.js';
import { chainRequestHandler, type ChainReader } from '../../net/p2p/serve.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../net/p2p/status.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { historyChain } from './history-chain.js';
import { devnetBeaconConfig } from '../../net/devnet/beacon-chain.js';
import { DevnetBeaconChain } from '../../net/devnet/beacon-objects.js';
import { startDevnetBeaconServer } from '../../net/devnet/beacon-server.js';

const { values } = parseArgs({ options: { chain: { type: 'string', default: 'mainnet' }, length: { type: 'string' }, blocks: { type: 'string' }, advance: { type: 'string', default: '8' }, 'beacon-api': { type: 'boolean', default: false } } });
const shape = historyChain(values.chain ?? 'mainnet', values.length === undefined ? undefined : Number(values.length));
const cached = await cachedChain(shape);
const genesis = devnetGenesis(cached.config);
const chain: ChainIdentity = { chainId: cached.config.chainId, schedule: devnetForkSchedule(cached.config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
const tipNumber = values.blocks === undefined ? shape.blocks : Number(values.blocks);
if (!Number.isSafeInteger(tipNumber) || tipNumber < 1 || tipNumber > shape.blocks) throw new Error(`history-peers --blocks ${values.blocks}: expected an integer in 1..${shape.blocks}`);
const advance = Number(values.advance);
if (!Number.isSafeInteger(advance) || advance < 0 || advance >= tipNumber) throw new Error(`history-peers --advance ${values.advance}: expected an integer in 0..${tipNumber - 1}`);
/**
 * The head it serves: `advance` blocks below the tip until `go` (standard input), then one more every 250 ms up to
 * the tip; `rewind` goes back below. A follower's cold backfill splits history from live at a finalize move it
 * sees, so each fresh follower needs a few new blocks. Headers above the head are not served (the walk ends there);
 * the announced range is the whole chain the peer holds.
 */
let movingSince: number | null = null;
const servedHead = () => (movingSince === null ? tipNumber - advance : Math.min(tipNumber, tipNumber - advance + Math.floor((performance.now() - movingSince) / 250)));

/** Where one block lies in the chain file: its header, the rest of the block (the body's payload), its receipts. */
interface Placed { readonly header: readonly [number, number]; readonly bodyPayload: readonly [number, number]; readonly receipts: readonly [number, number]; readonly timestamp: number }

const fd = openSync(cached.path, 'r');
const readAt = (at: number, length: number): Buffer => {
  const out = Buffer.allocUnsafe(length);
  for (let done = 0; done < length;) done += readSync(fd, out, done, length - done, at + done);
  return out;
};
const placed: Placed[] = [];
const hashes: Hash[] = [];
const numberByHash = new Map<Hash, number>();
{
  // The file: "CDNCHAIN" · u32 version · (u32 length · block · u32 length · receipts)* (bench/ingest/chain-file.ts).
  const size = fstatSync(fd).size;
  const genesisHeader = encodeHeader(genesis.header);
  hashes.push(genesis.hash);
  numberByHash.set(genesis.hash, 0);
  placed.push({ header: [-1, genesisHeader.length], bodyPayload: [-1, 0], receipts: [-1, 0], timestamp: genesis.header.timestamp });
  for (let at = 12; at < size && placed.length <= tipNumber;) {
    const blockLength = readAt(at, 4).readUInt32BE(0);
    const blockAt = at + 4;
    // The block's list prefix and its header's span, from the first bytes (a header is well under 2 KiB).
    const head = readAt(blockAt, Math.min(blockLength, 4096));
    // Spans are checked against the whole block's length; only their prefixes are read from `head`.
    const list = rlpSpan(head, 0, blockLength, 'chain file block');
    const header = rlpSpan(head, list.payload, blockLength, 'chain file header');
    if (header.end > head.length) throw new Error(`${cached.path}: block ${placed.length}'s header is longer than ${head.length} bytes`);
    const headerBytes = head.subarray(header.offset, header.end);
    const hash = keccak256Hex(headerBytes);
    const receiptsLengthAt = blockAt + blockLength;
    const receiptsLength = readAt(receiptsLengthAt, 4).readUInt32BE(0);
    numberByHash.set(hash, placed.length);
    hashes.push(hash);
    placed.push({
      header: [blockAt + header.offset, header.end - header.offset], bodyPayload: [blockAt + header.end, blockLength - header.end],
      receipts: [receiptsLengthAt + 4, receiptsLength], timestamp: decodeHeader(headerBytes).timestamp,
    });
    at = receiptsLengthAt + 4 + receiptsLength;
  }
}
if (placed.length <= tipNumber) throw new Error(`${cached.path} holds ${placed.length - 1} blocks, fewer than --blocks ${tipNumber}`);

const genesisParts = {
  header: encodeHeader(genesis.header),
  body: encodeBlockBody({ transactions: [], uncles: [], ...(genesis.header.withdrawalsRoot === undefined ? {} : { withdrawals: [] }) }),
  receipts: encodeEth69Receipts([]),
};
const header = (number: number) => (number === 0 ? genesisParts.header : readAt(...placed[number]!.header));
/** A body is the block's list without its header: a new list prefix over the rest of the block's payload. */
const body = (number: number) => {
  if (number === 0) return genesisParts.body;
  const [at, length] = placed[number]!.bodyPayload;
  const prefix = listPrefixLength(length);
  const out = Buffer.allocUnsafe(prefix + length);
  writeListPrefix(out, 0, length);
  for (let done = 0; done < length;) done += readSync(fd, out, prefix + done, length - done, at + done);
  return out;
};
const receipts = (number: number) => (number === 0 ? genesisParts.receipts : readAt(...placed[number]!.receipts));
const known = (hash: Hash) => numberByHash.get(hash.toLowerCase() as Hash);
const reader: ChainReader = {
  canonicalHeader: (number) => (number <= servedHead() && number >= 0 ? header(number) : undefined),
  numberOf: known,
  headerByHash: (hash) => { const n = known(hash); return n === undefined ? undefined : header(n); },
  bodyByHash: (hash) => { const n = known(hash); return n === undefined ? undefined : body(n); },
  receiptsByHash: (hash) => { const n = known(hash); return n === undefined ? undefined : receipts(n); },
};
const tip = { number: tipNumber, hash: hashes[tipNumber]!, timestamp: placed[tipNumber]!.timestamp };
const host = new EthHost({
  privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { ...tip, earliest: 0 }),
  checkStatus: (remote) => refuseStatus(chain, tip, remote), handler: chainRequestHandler(reader), maxPeers: 4, handshakeTimeoutMs: 10_000,
  listen: { host: '127.0.0.1', port: 0 },
});
const beacon = values['beacon-api'] ? await serveBeaconApi() : null;
process.stdout.write(`${JSON.stringify({ enode: formatEnode(host.id, '127.0.0.1', await host.port()), chainId: chain.chainId, genesis: genesis.hash, tip: tipNumber, ...(beacon ? { beaconApi: beacon } : {}) })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'go') movingSince = performance.now();
  if (line === 'rewind') movingSince = null;
}

/** The Beacon API over the served chain (`--beacon-api`): its head follows the served head, events on each move. */
async function serveBeaconApi(): Promise<string> {
  const blocks = {
    head: servedHead,
    blockAt: (number: number) => (number >= 0 && number <= tipNumber ? { header: number === 0 ? genesis.header : decodeHeader(header(number)), hash: hashes[number]! } : undefined),
  };
  const beaconChain = new DevnetBeaconChain(devnetBeaconConfig(cached.config), blocks, String(cached.config.seed), cached.config.finalityLag);
  const server = await startDevnetBeaconServer('127.0.0.1:0', beaconChain, servedHead);
  let announced = servedHead();
  setInterval(() => {
    if (servedHead() === announced) return;
    announced = servedHead();
    server.headChanged();
  }, 100).unref();
  return server.url;
}
