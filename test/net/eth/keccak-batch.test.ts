import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { BlockVerificationError, RlpDecodeError } from '../../../net/eth/errors.js';
import { decodeHeader } from '../../../net/eth/header.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { hashJobs, HashPlan, KECCAK_IMPLEMENTATIONS, keccak256Many, keccakAddonProblem, keccakImplementation, useKeccakImplementation } from '../../../net/eth/keccak-batch.js';
import { sortedPathsRoot, sortedTrieRoot, toNibbles } from '../../../net/eth/ordered-trie.js';
import { encodeRlp } from '../../../net/eth/rlp.js';
import { orderedTrieRootsSync, orderedTrieRootSync } from '../../../net/eth/trie-root.js';
import { planSortedPaths } from '../../../net/eth/trie-plan.js';
import { verifyBlockMaterialBytes } from '../../../net/eth/verify-material.js';
import { mainnetBlocks } from './fixtures.js';

/** A seeded generator, so a failure names inputs that can be made again. */
function generator(seed: number): (n: number) => number {
  let state = seed >>> 0 || 1;
  return (n) => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % n;
  };
}

function randomBytes(random: (n: number) => number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = random(256);
  return out;
}

/** Every length class: empty, one byte, around the 136-byte rate (one, two, three blocks), multi-block, large. */
const LENGTHS = [0, 1, 31, 32, 33, 55, 56, 135, 136, 137, 200, 271, 272, 273, 407, 408, 409, 1000, 4096, 70_000];

const noble = (bytes: Uint8Array) => bytesToHex(keccak_256(bytes));
const defaultImplementation = keccakImplementation();

after(() => useKeccakImplementation(defaultImplementation));

describe('batched keccak256 (net/eth/keccak-batch.ts)', () => {
  it('loads the native addon here (npm ci builds it; CDN_SKIP_NATIVE=1 skips the build)', { skip: process.env.CDN_SKIP_NATIVE === '1' }, () => {
    assert.equal(keccakAddonProblem(), undefined);
    assert.ok(KECCAK_IMPLEMENTATIONS.includes('scalar'));
    const flags = readFileSync('/proc/cpuinfo', 'utf8');
    if (/\bavx2\b/.test(flags)) assert.ok(KECCAK_IMPLEMENTATIONS.includes('avx2x4'), KECCAK_IMPLEMENTATIONS.join(','));
    if (/\bavx512f\b/.test(flags) && /\bavx512vl\b/.test(flags)) assert.ok(KECCAK_IMPLEMENTATIONS.includes('avx512x8'), KECCAK_IMPLEMENTATIONS.join(','));
    assert.equal(defaultImplementation, KECCAK_IMPLEMENTATIONS.at(-1));
  });

  for (const implementation of KECCAK_IMPLEMENTATIONS) {
    describe(implementation, () => {
      it('equals @noble/hashes keccak_256 on random inputs of every length class, in batches of every size up to 3 × 8 lanes + 1', () => {
        useKeccakImplementation(implementation);
        const random = generator(0x5eed + implementation.length);
        for (let count = 1; count <= 25; count++) {
          const inputs = Array.from({ length: count }, (_, i) => randomBytes(random, LENGTHS[(i * 7 + count + random(3)) % LENGTHS.length]!));
          const hashes = keccak256Many(inputs);
          inputs.forEach((input, i) => assert.equal(bytesToHex(hashes[i]!), noble(input), `${implementation}: batch of ${count}, input ${i} (${input.length} bytes)`));
        }
        for (const length of LENGTHS) {
          const input = randomBytes(random, length);
          assert.equal(bytesToHex(keccak256Many([input])[0]!), noble(input), `${implementation}: ${length} bytes alone`);
        }
      });

      it('runs levels in order: a job hashes what lower levels wrote into its input', () => {
        useKeccakImplementation(implementation);
        const random = generator(99);
        const plan = new HashPlan();
        const leaves = Array.from({ length: 19 }, (_, i) => randomBytes(random, LENGTHS[i % LENGTHS.length]!));
        // level 1: one node over the 19 leaf hashes; level 2: the hash of that hash and a leaf again
        const node = plan.reserve(32 * leaves.length);
        leaves.forEach((leaf, i) => plan.addJob(plan.append(leaf), leaf.length, node + 32 * i, 0));
        const nodeHash = plan.reserve(32);
        plan.addJob(node, 32 * leaves.length, nodeHash, 1);
        const top = plan.reserve(32);
        plan.addJob(nodeHash, 32, top, 2);
        plan.run();
        const expectedNode = keccak_256(new Uint8Array(leaves.flatMap((leaf) => [...keccak_256(leaf)])));
        assert.equal(bytesToHex(plan.hashAt(nodeHash)), bytesToHex(expectedNode));
        assert.equal(bytesToHex(plan.hashAt(top)), noble(expectedNode));
      });

      it('refuses a job outside the arena before hashing anything', () => {
        useKeccakImplementation(implementation);
        const arena = new Uint8Array(64);
        assert.throws(() => hashJobs(arena, Uint32Array.of(0, 70, 0, 0), 1), RangeError);
        assert.throws(() => hashJobs(arena, Uint32Array.of(0, 10, 40, 0), 1), RangeError);
        assert.throws(() => hashJobs(arena, Uint32Array.of(0, 10, 0, 300), 1), RangeError);
      });

      it('planned tries equal the node-by-node trie: ordered tries of 0 … 300 items and tries with random keys', () => {
        useKeccakImplementation(implementation);
        const random = generator(7);
        for (const count of [0, 1, 2, 15, 16, 17, 127, 128, 129, 200, 300]) {
          const values = Array.from({ length: count }, () => randomBytes(random, 1 + random(random(2) === 0 ? 40 : 600)));
          const paths = values.map((_, i) => toNibbles(encodeRlp(BigInt(i))));
          const order = paths.map((_, i) => i).sort((a, b) => Buffer.compare(Buffer.from(paths[a]!), Buffer.from(paths[b]!)));
          const reference = bytesToHex(sortedPathsRoot(order.map((i) => paths[i]!), order.map((i) => values[i]!)));
          assert.equal(orderedTrieRootSync(values), count === 0 ? orderedTrieRootSync([]) : reference, `${count} items`);
        }
        for (let round = 0; round < 20; round++) {
          const keys = new Map<string, Uint8Array>();
          const size = 1 + random(60);
          while (keys.size < size) {
            const key = randomBytes(random, 1 + random(random(2) === 0 ? 3 : 32));
            keys.set(Buffer.from(key).toString('hex'), key);
          }
          const sorted = [...keys.values()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
          // a key that is a prefix of another puts a value in a branch
          const entries = sorted.map((key) => ({ key, value: randomBytes(random, 1 + random(random(2) === 0 ? 8 : 300)) }));
          const reference = bytesToHex(sortedPathsRoot(entries.map((e) => toNibbles(e.key)), entries.map((e) => e.value)));
          assert.equal(bytesToHex(sortedTrieRoot(entries)), reference, `round ${round}`);
          const plan = new HashPlan();
          const root = planSortedPaths(plan, entries.map((e) => toNibbles(e.key)), entries.map((e) => e.value));
          plan.run();
          assert.equal(bytesToHex(plan.hashAt(root)), reference);
        }
      });

      it('verifies every mainnet fixture block: hash, transactions/withdrawals/receipts roots and bloom equal the header', () => {
        useKeccakImplementation(implementation);
        for (const fixture of mainnetBlocks()) {
          const header = decodeHeader(fixture.header);
          const verified = verifyBlockMaterialBytes({ header: fixture.header, body: fixture.body, receipts: fixture.receipts });
          assert.equal(verified.hash, noble(fixture.header), fixture.file);
          assert.equal(verified.header.number, fixture.number);
          const [transactionsRoot] = orderedTrieRootsSync([verified.transactions]);
          assert.equal(transactionsRoot, header.transactionsRoot, fixture.file);
        }
      });

      it('still names the first mismatch: a tampered receipt, a tampered header hash, and a malformed body behind a wrong hash', () => {
        useKeccakImplementation(implementation);
        const fixture = mainnetBlocks().find((f) => f.number === 22431084)!;
        // The last byte of the receipts is inside the last log's data: the receipts root changes, nothing else.
        const receipts = fixture.receipts.slice();
        receipts[receipts.length - 1]! ^= 1;
        assert.throws(() => verifyBlockMaterialBytes({ header: fixture.header, body: fixture.body, receipts }),
          (error: unknown) => error instanceof BlockVerificationError && error.field === 'receiptsRoot');
        const expectedHash = bytesToHex(new Uint8Array(32));
        assert.throws(() => verifyBlockMaterialBytes({ header: fixture.header, body: fixture.body, receipts: fixture.receipts, expectedHash }),
          (error: unknown) => error instanceof BlockVerificationError && error.field === 'hash');
        const truncated = fixture.body.subarray(0, fixture.body.length - 1);
        assert.throws(() => verifyBlockMaterialBytes({ header: fixture.header, body: truncated, receipts: fixture.receipts, expectedHash }),
          (error: unknown) => error instanceof BlockVerificationError && error.field === 'hash');
        assert.throws(() => verifyBlockMaterialBytes({ header: fixture.header, body: truncated, receipts: fixture.receipts }), RlpDecodeError);
        // and the block verifies again afterwards (no bloom bit left waiting from the failed calls)
        assert.equal(verifyBlockMaterialBytes({ header: fixture.header, body: fixture.body, receipts: fixture.receipts }).hash, noble(fixture.header));
      });
    });
  }
});
