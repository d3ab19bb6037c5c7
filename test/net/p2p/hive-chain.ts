/** The hive `eth` test chain (../shared/fixtures/hive-eth-chain) as raw header and body bytes, and a ChainReader over them. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import { encodeHeader } from '../../../net/eth/header.js';
import type { Hash } from '../../../net/eth/hex.js';
import { keccak256Hex } from '../../../net/eth/keccak.js';
import { rlpChildren, rlpSpan } from '../../../net/eth/rlp-walk.js';
import { rawList } from '../../../net/p2p/eth-messages.js';
import type { ChainReader } from '../../../net/p2p/serve.js';
import type { ChainIdentity } from '../../../net/p2p/status.js';
import { FIXTURES } from '../../support/paths.js';

export interface RawBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
}

export interface HiveChain {
  readonly chain: ChainIdentity;
  /** Genesis first. */
  readonly blocks: readonly RawBlock[];
}

export async function loadHiveChain(): Promise<HiveChain> {
  const dir = join(FIXTURES, 'hive-eth-chain');
  const genesis = parseGethGenesis(JSON.parse(readFileSync(join(dir, 'genesis.json'), 'utf8')));
  const built = buildGenesisBlock(genesis);
  const genesisHeader = encodeHeader(built.header);
  const blocks: RawBlock[] = [{ number: 0, hash: built.hash, header: genesisHeader, body: rawList([rawList([]), rawList([]), ...(built.header.withdrawalsRoot ? [rawList([])] : [])]) }];
  const bytes = new Uint8Array(readFileSync(join(dir, 'chain.rlp')));
  for (let offset = 0; offset < bytes.length;) {
    const block = rlpSpan(bytes, offset, bytes.length, 'chain.rlp');
    const [header, ...rest] = rlpChildren(bytes, block, 'chain.rlp');
    const headerBytes = bytes.subarray(header!.offset, header!.end);
    blocks.push({ number: blocks.length, hash: keccak256Hex(headerBytes), header: headerBytes, body: rawList(rest.map((span) => bytes.subarray(span.offset, span.end))) });
    offset = block.end;
  }
  return { chain: { chainId: Number(genesis.chainId), schedule: genesis.schedule, genesis: { hash: built.hash, timestamp: built.header.timestamp } }, blocks };
}

/** Serves `blocks` (canonical by index); `tamper` replaces the body served for a hash. */
export function readerOf(blocks: readonly RawBlock[], tamper?: (hash: Hash, body: Uint8Array) => Uint8Array): ChainReader {
  const byHash = new Map(blocks.map((block) => [block.hash, block]));
  return {
    canonicalHeader: (number) => blocks[number]?.header,
    numberOf: (hash) => byHash.get(hash)?.number,
    headerByHash: (hash) => byHash.get(hash)?.header,
    bodyByHash: (hash) => {
      const body = byHash.get(hash)?.body;
      return body && tamper ? tamper(hash, body) : body;
    },
    receiptsByHash: () => undefined,
  };
}
