/**
 * A chain reader over the store's verified material (headers, bodies and eth/69 receipts by hash), with the
 * canonical numbering given by the caller (the devnet's own view while it produces, the chain lane's table else).
 */
import { getBlockNumber, getBodyBytes, getCanonicalHash, getHeaderBytes, getReceiptsBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';
import { hexToBytes, type Hash } from '../../net/eth/hex.js';
import type { ChainReader } from '../../net/p2p/serve.js';

export function storeChainReader(store: Store, canonicalHash: (number: number) => Uint8Array | undefined = (n) => getCanonicalHash(store, n)): ChainReader {
  const key = (hash: Hash) => hexToBytes(hash, 32);
  return {
    canonicalHeader: (number) => {
      const hash = canonicalHash(number);
      return hash ? getHeaderBytes(store, hash, number) : undefined;
    },
    numberOf: (hash) => getBlockNumber(store, key(hash)),
    headerByHash: (hash) => getHeaderBytes(store, key(hash)),
    bodyByHash: (hash) => getBodyBytes(store, key(hash)),
    receiptsByHash: (hash) => getReceiptsBytes(store, key(hash)),
  };
}
