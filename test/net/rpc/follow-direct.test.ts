/**
 * The live follower's conversion (net/rpc/follow.ts: the direct JSON → RLP writer, with the object path only for a
 * transactions root it refuses) against the object path it replaced (`materialFromJson`): the same stored bytes and
 * the same errors, through a real JSON-RPC client and server on loopback.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseGwei, stringToHex, toBlobs, type Kzg } from 'viem';
import { BlockView } from '../../../api/rpc/block-view.js';
import { renderBlock } from '../../../api/rpc/render-block.js';
import { blockReceipts } from '../../../api/rpc/render-receipt.js';
import { BlockVerificationError, EthFormatError } from '../../../net/eth/errors.js';
import { MAINNET_SCHEDULE } from '../../../net/eth/fork-schedule.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { bytesToHex, type Hash } from '../../../net/eth/hex.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import type { BlockMaterial } from '../../../store/chain-material.js';
import { createRpcClient, type RpcClient } from '../../../net/rpc/client.js';
import { materialFromJson } from '../../../net/rpc/convert.js';
import { PooledBlobRootError, UpstreamFormatError } from '../../../net/rpc/errors.js';
import { fetchBlock, follow, type FollowedBlock } from '../../../net/rpc/follow.js';
import { startAnvil, type Anvil } from '../../support/anvil.js';
import { mainnetBlocks } from '../eth/fixtures.js';
import { clients, loadKzg } from './wallet.js';

type Json = Record<string, unknown>;

interface Served {
  readonly block: Json;
  readonly receipts: Json[];
}

const hex = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('hex'));
const parts = (material: BlockMaterial) => [material.number, hex(material.hash), hex(material.header), hex(material.body), hex(material.receipts)];

/** The followed block is the material the object path makes of the same JSON, and says its own number and hashes. */
async function assertSameAsObjectPath(followed: FollowedBlock, served: Served, options: { pooledBlobRoots?: boolean } = {}): Promise<void> {
  const old = await materialFromJson(served.block, served.receipts, options);
  assert.deepEqual(parts(followed.material), parts(old.material), `block ${old.header.number}: the stored bytes`);
  assert.equal(followed.number, old.header.number);
  assert.equal(followed.hash, bytesToHex(old.material.hash));
  assert.equal(followed.hash, bytesToHex(keccak256(followed.material.header)));
  assert.equal(followed.parentHash, old.header.parentHash);
}

/** The error the object path throws for the same JSON, and the live path's: the same class, message and fields. */
function sameError(expected: Error) {
  return (error: unknown) => {
    assert.ok(error instanceof Error, String(error));
    assert.equal(error.constructor, expected.constructor);
    assert.equal(error.name, expected.name);
    assert.equal(error.message, expected.message);
    if (expected instanceof BlockVerificationError) {
      const actual = error as BlockVerificationError;
      assert.deepEqual([actual.field, actual.expected, actual.actual, actual.blockNumber, actual.blockHash],
        [expected.field, expected.expected, expected.actual, expected.blockNumber, expected.blockHash]);
    }
    return true;
  };
}

async function objectPathError(served: Served, options: { pooledBlobRoots?: boolean } = {}): Promise<Error> {
  return materialFromJson(served.block, served.receipts, options).then(() => assert.fail('the object path accepted the block'), (error: unknown) => error as Error);
}

/** A JSON-RPC upstream on loopback answering the three methods `follow` calls, single or batched, from a table. */
async function startUpstream(blocks: Map<Hash, Served>, latest: () => Hash): Promise<{ url: string; close: () => Promise<void> }> {
  const answer = ({ id, method, params }: { id: unknown; method: string; params: unknown[] }) => {
    const served = (hash: unknown) => blocks.get(String(hash) as Hash) ?? null;
    if (method === 'eth_getBlockByHash') return { jsonrpc: '2.0', id, result: served(params[0])?.block ?? null };
    if (method === 'eth_getBlockReceipts') return { jsonrpc: '2.0', id, result: served(params[0])?.receipts ?? null };
    if (method === 'eth_getBlockByNumber' && params[0] === 'latest') {
      const { block } = blocks.get(latest())!;
      return { jsonrpc: '2.0', id, result: { ...block, transactions: (block.transactions as Json[]).map((tx) => tx.hash) } };
    }
    return { jsonrpc: '2.0', id, error: { code: -32601, message: `${method} is not served here` } };
  };
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => { body += chunk; });
    request.on('end', () => {
      const parsed = JSON.parse(body) as Parameters<typeof answer>[0] | Parameters<typeof answer>[0][];
      const result = Array.isArray(parsed) ? parsed.map(answer) : answer(parsed);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

describe('the live follower converts the mainnet fixture blocks as the object path did', () => {
  const fixtures = mainnetBlocks();
  const served = new Map<Hash, Served>();
  const hashes: Hash[] = [];
  let latest: Hash;
  let upstream: { url: string; close: () => Promise<void> };
  let client: RpcClient;

  before(async () => {
    for (const f of fixtures) {
      const hash = bytesToHex(keccak256(f.header));
      const view = new BlockView({ hash: keccak256(f.header), number: f.number, header: f.header, body: f.body, receipts: f.receipts });
      const block = JSON.parse(renderBlock(view, true).toString()) as Json;
      const receipts = JSON.parse(`[${blockReceipts(view, MAINNET_SCHEDULE)!.join(',')}]`) as Json[];
      served.set(hash, { block, receipts });
      hashes.push(hash);
    }
    latest = hashes.at(-1)!;
    upstream = await startUpstream(served, () => latest);
    client = createRpcClient({ url: upstream.url, timeoutMs: 30_000, maxRetries: 0, backoffInitialMs: 10, backoffMaxMs: 10 });
  });
  after(async () => {
    await upstream?.close();
  });

  it('fetchBlock stores each of the six blocks byte for byte as materialFromJson did, and as the fixtures hold them', async () => {
    assert.equal(fixtures.length, 6);
    for (const [i, hash] of hashes.entries()) {
      const followed = await fetchBlock(client, hash);
      await assertSameAsObjectPath(followed, served.get(hash)!);
      assert.deepEqual([hex(followed.material.header), hex(followed.material.body), hex(followed.material.receipts)],
        [hex(fixtures[i]!.header), hex(fixtures[i]!.body), hex(fixtures[i]!.receipts)], fixtures[i]!.file);
      assert.equal(followed.number, fixtures[i]!.number);
      assert.equal(followed.parentHash, decodeHeader(fixtures[i]!.header).parentHash);
    }
  });

  it('follow from an empty store records the upstream head with the same bytes', async () => {
    // maxReorgDepth 0 accepts no reorg, so following begins at the head itself (the stub serves only these blocks).
    for (const hash of hashes) {
      latest = hash;
      const result = await follow({ client, localHead: null, maxReorgDepth: 0, isKnown: () => false });
      assert.equal(result.branch.length, 1);
      assert.deepEqual(result.head, { number: result.branch[0]!.number, hash });
      await assertSameAsObjectPath(result.branch[0]!, served.get(hash)!);
    }
  });

  it('a block whose receipts do not match its receipts root is refused with the error the object path threw', async () => {
    const hash = hashes.at(-1)!;
    const original = served.get(hash)!;
    const receipts = structuredClone(original.receipts);
    const first = receipts.find((receipt) => receipt.status === '0x1')!;
    first.status = '0x0';
    const tampered = { block: original.block, receipts };
    const expected = await objectPathError(tampered);
    assert.ok(expected instanceof BlockVerificationError && expected.field === 'receiptsRoot', String(expected));
    served.set(hash, tampered);
    try {
      await assert.rejects(fetchBlock(client, hash), sameError(expected));
      latest = hash;
      await assert.rejects(follow({ client, localHead: null, maxReorgDepth: 0, isKnown: () => false }), (error: unknown) => {
        assert.ok(error instanceof EthFormatError, 'the rpc source counts it a source failure (isSourceFailure), not a bug');
        return sameError(expected)(error);
      });
    } finally {
      served.set(hash, original);
    }
  });

  it('malformed JSON is refused with the error the object path threw', async () => {
    const hash = hashes.at(-1)!;
    const original = served.get(hash)!;
    const block = structuredClone(original.block);
    (block.transactions as Json[])[1]!.nonce = '0xnot-hex';
    const malformed = { block, receipts: original.receipts };
    const expected = await objectPathError(malformed);
    assert.ok(expected instanceof UpstreamFormatError || expected instanceof EthFormatError, String(expected));
    served.set(hash, malformed);
    try {
      await assert.rejects(fetchBlock(client, hash), sameError(expected));
    } finally {
      served.set(hash, original);
    }
  });
});

describe('anvil\'s pooled-form blob transactions root: accepted with pooledBlobRoots, refused as before without', () => {
  let anvil: Anvil;
  let kzg: Kzg;
  let client: RpcClient;
  let blobBlock: { number: number; hash: Hash };

  before(async () => {
    anvil = await startAnvil();
    kzg = await loadKzg();
    client = createRpcClient({ url: anvil.url, timeoutMs: 30_000, maxRetries: 1, backoffInitialMs: 10, backoffMaxMs: 100 });
    const { wallet, public: pub } = clients(anvil);
    const fees = { maxFeePerGas: parseGwei('20'), maxPriorityFeePerGas: parseGwei('1') };
    const sent = await wallet.sendTransaction({
      to: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', blobs: toBlobs({ data: stringToHex('a live blob') }), kzg,
      maxFeePerBlobGas: parseGwei('30'), gas: 50_000n, ...fees,
    });
    const receipt = await pub.waitForTransactionReceipt({ hash: sent, pollingInterval: 50 });
    blobBlock = { number: Number(receipt.blockNumber), hash: receipt.blockHash };
  });
  after(async () => {
    await anvil?.stop();
  });

  const servedJson = async (): Promise<Served> => {
    const [block, receipts] = await Promise.all([
      anvil.rpc<Json>('eth_getBlockByHash', [blobBlock.hash, true]), anvil.rpc<Json[]>('eth_getBlockReceipts', [blobBlock.hash]),
    ]);
    return { block, receipts };
  };

  it('with pooledBlobRoots the blob block is followed, stored as the object path stores it', async () => {
    const result = await follow({ client, localHead: null, maxReorgDepth: 0, isKnown: () => false, pooledBlobRoots: true });
    assert.deepEqual(result.head, blobBlock);
    assert.equal(result.branch.length, 1);
    await assertSameAsObjectPath(result.branch[0]!, await servedJson(), { pooledBlobRoots: true });
  });

  it('without it the block is refused with PooledBlobRootError, as the object path refused it', async () => {
    const expected = await objectPathError(await servedJson());
    assert.ok(expected instanceof PooledBlobRootError, String(expected));
    await assert.rejects(fetchBlock(client, blobBlock.hash), sameError(expected));
    await assert.rejects(follow({ client, localHead: null, maxReorgDepth: 0, isKnown: () => false }), sameError(expected));
  });

  it('with pooledBlobRoots a changed sidecar is still refused, with the object path\'s error', async () => {
    const { block, receipts } = await servedJson();
    const bad = structuredClone(block);
    const blobTx = (bad.transactions as Json[]).find((tx) => tx.type === '0x3')!;
    blobTx.proofs = [(blobTx.proofs as string[])[0]!.replace(/.$/, (c) => (c === '0' ? '1' : '0'))];
    const expected = await objectPathError({ block: bad, receipts }, { pooledBlobRoots: true });
    assert.ok(expected instanceof BlockVerificationError && expected.field === 'transactionsRoot', String(expected));
    const upstream = await startUpstream(new Map([[blobBlock.hash, { block: bad, receipts }]]), () => blobBlock.hash);
    try {
      const viaFront = createRpcClient({ url: upstream.url, timeoutMs: 30_000, maxRetries: 0, backoffInitialMs: 10, backoffMaxMs: 10 });
      await assert.rejects(fetchBlock(viaFront, blobBlock.hash, { pooledBlobRoots: true }), sameError(expected));
    } finally {
      await upstream.close();
    }
  });
});
