/**
 * The genesis state root (a secure trie of accounts `rlp([nonce, balance, storageRoot, codeHash])`, each storage a
 * secure trie of non-zero slots `rlp(trimmed value)`), and from it the full genesis header and hash.
 */
import { createMPT } from '@ethereumjs/mpt';
import type { GenesisAccount, ParsedGenesis } from './genesis.js';
import { hashHeader, type BlockHeader } from './header.js';
import { bytesToHex, hexToBytes, type Address, type Hash } from './hex.js';
import { keccak256 } from './keccak.js';
import { encodeRlp } from './rlp.js';
import { EMPTY_TRIE_ROOT } from './trie-root.js';

async function secureTrieRoot(entries: readonly (readonly [Uint8Array, Uint8Array])[]): Promise<Uint8Array> {
  const trie = await createMPT({ useKeyHashing: true });
  await trie.batch(entries.map(([key, value]) => ({ type: 'put' as const, key, value })));
  return trie.root();
}

function trimLeadingZeros(bytes: Uint8Array): Uint8Array {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

async function storageRoot(account: GenesisAccount): Promise<Uint8Array> {
  const entries: [Uint8Array, Uint8Array][] = [];
  for (const [slot, value] of account.storage) {
    const trimmed = trimLeadingZeros(hexToBytes(value));
    if (trimmed.length > 0) entries.push([hexToBytes(slot), encodeRlp(trimmed)]);
  }
  return entries.length === 0 ? hexToBytes(EMPTY_TRIE_ROOT) : secureTrieRoot(entries);
}

export async function genesisStateRoot(alloc: ReadonlyMap<Address, GenesisAccount>): Promise<Hash> {
  const entries: [Uint8Array, Uint8Array][] = [];
  for (const [address, account] of alloc) {
    const codeHash = keccak256(hexToBytes(account.code));
    const value = encodeRlp([account.nonce, account.balance, await storageRoot(account), codeHash]);
    entries.push([hexToBytes(address), value]);
  }
  return bytesToHex(await secureTrieRoot(entries));
}

export interface GenesisBlock {
  header: BlockHeader;
  hash: Hash;
}

/** The complete genesis header (state root included) and its hash, as geth builds them from `genesis.json`. */
export async function buildGenesisBlock(genesis: ParsedGenesis): Promise<GenesisBlock> {
  const header: BlockHeader = { ...genesis.header, stateRoot: await genesisStateRoot(genesis.alloc) };
  return { header, hash: hashHeader(header) };
}
