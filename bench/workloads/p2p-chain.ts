/** The chain the p2p workload serves: the cached ingest chain (mainnet-shaped, or the smoke one) as eth material. */
import { devnetForkSchedule, devnetGenesis } from '../../net/devnet/index.js';
import { decodeHeader, encodeHeader } from '../../net/eth/header.js';
import type { Hash } from '../../net/eth/hex.js';
import { keccak256Hex } from '../../net/eth/keccak.js';
import { rlpChildren, rlpWhole } from '../../net/eth/rlp-walk.js';
import { rawList } from '../../net/p2p/eth-messages.js';
import type { ChainReader } from '../../net/p2p/serve.js';
import type { ChainIdentity } from '../../net/p2p/status.js';
import { cachedChain } from '../ingest/chain-cache.js';
import { readChainFile } from '../ingest/chain-file.js';
import { MAINNET_SHAPED_CHAIN, SMOKE_CHAIN } from '../ingest/chains.js';

export interface ServedBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly header: Uint8Array;
  readonly body: Uint8Array;
  readonly receipts: Uint8Array;
  readonly timestamp: number;
}

export async function loadChain(smoke: boolean): Promise<{ chain: ChainIdentity; blocks: ServedBlock[] }> {
  const cached = await cachedChain(smoke ? SMOKE_CHAIN : MAINNET_SHAPED_CHAIN);
  const genesis = devnetGenesis(cached.config);
  const genesisHeader = encodeHeader(genesis.header);
  const blocks: ServedBlock[] = [{ number: 0, hash: genesis.hash, header: genesisHeader, body: rawList([rawList([]), rawList([]), rawList([])]), receipts: rawList([]), timestamp: genesis.header.timestamp }];
  for await (const record of readChainFile(cached.path)) {
    const [header, ...rest] = rlpChildren(record.block, rlpWhole(record.block, 'bench block'), 'bench block');
    const headerBytes = record.block.slice(header!.offset, header!.end);
    const decoded = decodeHeader(headerBytes);
    blocks.push({ number: decoded.number, hash: keccak256Hex(headerBytes), header: headerBytes, body: rawList(rest.map((s) => record.block.subarray(s.offset, s.end))), receipts: record.receipts, timestamp: decoded.timestamp });
  }
  return { chain: { chainId: cached.config.chainId, schedule: devnetForkSchedule(cached.config), genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } }, blocks };
}

export function readerOf(blocks: readonly ServedBlock[]): ChainReader {
  const byHash = new Map(blocks.map((block) => [block.hash, block]));
  return {
    canonicalHeader: (number) => blocks[number]?.header,
    numberOf: (hash) => byHash.get(hash)?.number,
    headerByHash: (hash) => byHash.get(hash)?.header,
    bodyByHash: (hash) => byHash.get(hash)?.body,
    receiptsByHash: (hash) => byHash.get(hash)?.receipts,
  };
}
