/**
 * The genesis state root (a secure trie of accounts `rlp([nonce, balance, storageRoot, codeHash])`, each storage a
 * secure trie of non-zero slots `rlp(trimmed value)`), and from it the full genesis header and hash.
 */
import type { GenesisAccount, ParsedGenesis } from './genesis.js';
import { hashHeader, type BlockHeader } from './header.js';
import { bytesToHex, hexToBytes, type Address, type Hash } from './hex.js';
import { keccak256 } from './keccak.js';
import { sortedTrieRoot } from './ordered-trie.js';
import { encodeRlp } from './rlp.js';

/** A secure trie (keys hashed) of non-empty values, built in one pass over the hashed keys in order. */
function secureTrieRoot(entries: readonly (readonly [Uint8Array, Uint8Array])[]): Uint8Array {
  const hashed = entries.map(([key, value]) => ({ key: keccak256(key), value }));
  hashed.sort((a, b) => Buffer.compare(a.key, b.key));
  return sortedTrieRoot(hashed);
}

function trimLeadingZeros(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

function storageRoot(account: GenesisAccount): Uint8Array {
  const entries: [Uint8Array, Uint8Array][] = [];
  for (const [slot, value] of account.storage) {
    const trimmed = trimLeadingZeros(hexToBytes(value));
    if (trimmed.length > 0) entries.push([hexToBytes(slot), encodeRlp(trimmed)]);
  }
  return secureTrieRoot(entries);
}

export function genesisStateRoot(alloc: ReadonlyMap<Address, GenesisAccount>): Hash {
  const entries: [Uint8Array, Uint8Array][] = [];
  for (const [address, account] of alloc) {
    const codeHash = keccak256(hexToBytes(account.code));
    entries.push([hexToBytes(address), encodeRlp([account.nonce, account.balance, storageRoot(account), codeHash])]);
  }
  return bytesToHex(secureTrieRoot(entries));
}

export interface GenesisBlock {
  header: BlockHeader;
  hash: Hash;
}

/** The complete genesis header (state root included) and its hash, as geth builds them from `genesis.json`. */
export function buildGenesisBlock(genesis: ParsedGenesis): GenesisBlock {
  const header: BlockHeader = { ...genesis.header, stateRoot: genesisStateRoot(genesis.alloc) };
  return { header, hash: hashHeader(header) };
}
