import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { recoverAuthorizationAddress } from '../../../net/eth/authorization.js';
import { calcExcessBlobGas } from '../../../net/eth/blob-fee.js';
import { encodeBlock, type Block } from '../../../net/eth/block.js';
import { decodeChainRlp } from '../../../net/eth/chain-rlp.js';
import { RlpDecodeError } from '../../../net/eth/errors.js';
import { blobParamsAt, forkAt, type ForkName } from '../../../net/eth/fork-schedule.js';
import { buildGenesisBlock, type GenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis, type ParsedGenesis } from '../../../net/eth/genesis.js';
import { hashHeader } from '../../../net/eth/header.js';
import { concatBytes, type Hash } from '../../../net/eth/hex.js';
import { hashTransaction } from '../../../net/eth/transaction-encode.js';
import { recoverTransactionSender } from '../../../net/eth/transaction-sender.js';
import { verifyBlock } from '../../../net/eth/verify-block.js';
import { readBytes, readJson } from './fixtures.js';

/** Header field count of each fork's shape. */
function expectedFieldCount(fork: ForkName): number {
  const order: ForkName[] = ['london', 'shanghai', 'cancun', 'prague'];
  const counts = [16, 17, 20, 21];
  let count = 15;
  for (let i = 0; i < order.length; i++) if (forkIndex(fork) >= forkIndex(order[i]!)) count = counts[i]!;
  return count;
}
const FORK_ORDER: ForkName[] = ['frontier', 'homestead', 'dao', 'tangerineWhistle', 'spuriousDragon', 'byzantium', 'constantinople',
  'petersburg', 'istanbul', 'muirGlacier', 'berlin', 'london', 'arrowGlacier', 'grayGlacier', 'paris', 'shanghai', 'cancun',
  'prague', 'osaka', 'bpo1', 'bpo2'];
function forkIndex(fork: ForkName): number {
  return FORK_ORDER.indexOf(fork);
}

interface Chain {
  genesis: ParsedGenesis;
  genesisBlock: GenesisBlock;
  blocks: Block[];
  bytes: Uint8Array;
}

function describeChain(folder: string, blockCount: number, headHash: () => Hash, extra?: (chain: () => Chain) => void): void {
  describe(`${folder}/chain.rlp`, () => {
    let chain: Chain;
    before(async () => {
      const genesis = parseGethGenesis(readJson(`${folder}/genesis.json`));
      const bytes = readBytes(`${folder}/chain.rlp`);
      chain = { genesis, genesisBlock: buildGenesisBlock(genesis), blocks: [...decodeChainRlp(bytes)], bytes };
    });

    it(`decodes ${blockCount} blocks numbered 1..${blockCount}, re-encoding to the file byte for byte`, () => {
      assert.equal(chain.blocks.length, blockCount);
      chain.blocks.forEach((block, i) => assert.equal(block.header.number, i + 1));
      assert.deepEqual(concatBytes(...chain.blocks.map(encodeBlock)), chain.bytes);
    });

    it('block 1 links to the genesis hash computed from genesis.json (state root included)', () => {
      assert.equal(chain.blocks[0]!.header.parentHash, chain.genesisBlock.hash);
    });

    it('every block links to its parent and verifies its transactions root, withdrawals root, uncles and blob gas', async () => {
      let parent = chain.genesisBlock.header;
      for (const block of chain.blocks) {
        await verifyBlock({ header: block.header, transactions: block.transactions, withdrawals: block.withdrawals, uncles: block.uncles, parent });
        parent = block.header;
      }
    });

    it('the last block is the head the fixture names', () => {
      assert.equal(hashHeader(chain.blocks.at(-1)!.header), headHash());
    });

    it('every header has the shape of its fork (15 fields pre-London … 21 from Prague)', () => {
      for (const block of chain.blocks) {
        const fork = forkAt(chain.genesis.schedule, block.header);
        assert.equal(Object.keys(block.header).length, expectedFieldCount(fork), `block ${block.header.number} (${fork})`);
        assert.equal(block.withdrawals !== undefined, forkIndex(fork) >= forkIndex('shanghai'), `block ${block.header.number} withdrawals`);
      }
    });

    it('every sender recovers and every excessBlobGas recomputes from its parent under the genesis blob schedule', () => {
      let parent = chain.genesisBlock.header;
      let checked = 0;
      let withBlobGas = 0;
      for (const block of chain.blocks) {
        for (const tx of block.transactions) recoverTransactionSender(tx);
        const params = blobParamsAt(chain.genesis.schedule, block.header);
        assert.equal(params === undefined, block.header.excessBlobGas === undefined, `block ${block.header.number}`);
        if (params !== undefined) {
          assert.equal(calcExcessBlobGas(parent, params), block.header.excessBlobGas, `block ${block.header.number}`);
          checked++;
          if (block.header.blobGasUsed! > 0n) withBlobGas++;
        }
        parent = block.header;
      }
      assert.ok(checked > 0 && withBlobGas > 0, `checked ${checked} blocks, ${withBlobGas} using blob gas`);
    });

    extra?.(() => chain);
  });
}

interface TxInfo { txhash: Hash; sender: string; block: string; indexInBlock: number }

describeChain('hive-eth-chain', 600, () => (readJson('hive-eth-chain/headblock.json') as { hash: Hash }).hash, (chain) => {
  const txinfo = readJson('hive-eth-chain/txinfo.json') as Record<string, unknown>;

  it('every transaction txinfo.json lists has its hash and sender at its block and index', () => {
    let checked = 0;
    for (const [name, entries] of Object.entries(txinfo)) {
      if (!name.startsWith('tx-') || !Array.isArray(entries)) continue;
      for (const info of entries as TxInfo[]) {
        const tx = chain().blocks[Number(info.block) - 1]!.transactions[info.indexInBlock]!;
        assert.equal(hashTransaction(tx), info.txhash, name);
        assert.equal(recoverTransactionSender(tx), info.sender, name);
        checked++;
      }
    }
    assert.ok(checked > 50, `checked ${checked}`);
  });

  it('the EIP-7702 transaction authorizes the account txinfo.json names, delegating to the proxy', () => {
    const info = txinfo['tx-eip7702'] as { account: string; proxyAddr: string; authorizeTx: Hash };
    const tx = chain().blocks.flatMap((b) => b.transactions).find((t) => hashTransaction(t) === info.authorizeTx);
    assert.ok(tx && tx.type === 'eip7702');
    const [auth] = tx.authorizationList;
    assert.ok(auth);
    assert.equal(recoverAuthorizationAddress(auth), info.account);
    assert.equal(auth.address, info.proxyAddr);
  });

  it('withdrawals decode to the values txinfo.json lists', () => {
    const listed = txinfo.withdrawals as Record<string, { withdrawals: { index: string; validatorIndex: string; address: string; amount: string }[] }>;
    assert.ok(Object.keys(listed).length > 0);
    for (const [number, { withdrawals }] of Object.entries(listed)) {
      const block = chain().blocks[Number(number) - 1]!;
      assert.deepEqual(block.withdrawals, withdrawals.map((w) => ({
        index: BigInt(w.index), validatorIndex: BigInt(w.validatorIndex), address: w.address, amount: BigInt(w.amount),
      })), `block ${number}`);
    }
  });
});

describeChain('execution-apis', 54, () => (readJson('execution-apis/headfcu.json') as { params: [{ headBlockHash: Hash }] }).params[0].headBlockHash, (chain) => {
  it('spans London → Merge → Shanghai → Cancun → Prague → Osaka → BPO1 → BPO2, blob transactions in blocks 42, 43, 45, 48, 51, 53', () => {
    const forks = new Set(chain().blocks.map((b) => forkAt(chain().genesis.schedule, b.header)));
    for (const fork of ['london', 'paris', 'shanghai', 'cancun', 'prague', 'osaka', 'bpo1', 'bpo2'] as const) assert.ok(forks.has(fork), fork);
    const withBlobs = chain().blocks.filter((b) => b.transactions.some((tx) => tx.type === 'eip4844')).map((b) => b.header.number);
    assert.deepEqual(withBlobs, [42, 43, 45, 48, 51, 53]);
  });
});

describe('decodeChainRlp on damaged input', () => {
  it('names the block and offset of a truncated block', () => {
    const bytes = readBytes('execution-apis/chain.rlp');
    const truncated = bytes.subarray(0, bytes.length - 10);
    assert.throws(() => [...decodeChainRlp(truncated)], (error: unknown) => error instanceof RlpDecodeError && /block #53 at byte \d+/.test(error.message));
  });
});
