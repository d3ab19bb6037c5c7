/**
 * A viem wallet on anvil's first dev account, KZG from c-kzg (native) for blob transactions, and a tiny contract whose
 * every call emits one log, so receipts carry logs and blocks a non-empty bloom.
 */
import { createPublicClient, createWalletClient, defineKzg, http, type Hex, type Kzg } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import cKzg from 'c-kzg';
import { DEV_PRIVATE_KEY, type Anvil } from '../../support/anvil.js';

/**
 * c-kzg with its bundled mainnet trusted setup, without the PeerDAS precomputation (a blob's commitment
 * and proof need none): about 1 s to load, where kzg-wasm took ~15 s of CPU per test file.
 */
export async function loadKzg(): Promise<Kzg> {
  try {
    cKzg.loadTrustedSetup(0);
  } catch (error) {
    // Loaded once per process: a second load is refused by the library, and the first one serves.
    if (!/already loaded/i.test(String(error))) throw error;
  }
  return defineKzg({
    blobToKzgCommitment: (blob) => cKzg.blobToKzgCommitment(blob),
    computeBlobKzgProof: (blob, commitment) => cKzg.computeBlobKzgProof(blob, commitment),
  });
}

export function clients(anvil: Anvil) {
  const account = privateKeyToAccount(DEV_PRIVATE_KEY);
  const transport = http(anvil.url, { timeout: 120_000 });
  return {
    account,
    wallet: createWalletClient({ account, chain: foundry, transport }),
    public: createPublicClient({ chain: foundry, transport }),
  };
}

/** Topic of the log the contract emits. */
export const LOG_TOPIC: Hex = `0x${'ab'.repeat(32)}`;

/**
 * Init code returning a runtime that stores 42 at memory 0 and emits LOG1(memory[0..32], LOG_TOPIC):
 * runtime = PUSH1 42 PUSH1 0 MSTORE PUSH32 topic PUSH1 32 PUSH1 0 LOG1 STOP (44 bytes);
 * init = PUSH1 44 PUSH1 12 PUSH1 0 CODECOPY PUSH1 44 PUSH1 0 RETURN (12 bytes).
 */
export const LOGGER_INIT_CODE: Hex = `0x602c600c600039602c6000f3602a6000527f${'ab'.repeat(32)}60206000a100`;
