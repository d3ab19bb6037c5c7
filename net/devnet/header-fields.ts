/** Header values every devnet block shares. */
import { bytesToHex, type Address, type Hash, type Hex } from '../eth/index.js';

/** `extraData` of every devnet block: "cdn-devnet". */
export const DEVNET_EXTRA_DATA: Hex = bytesToHex(new TextEncoder().encode('cdn-devnet'));
export const ZERO_NONCE: Hex = '0x0000000000000000';
export const ZERO_HASH: Hash = `0x${'00'.repeat(32)}`;
export const ZERO_ADDRESS: Address = `0x${'00'.repeat(20)}`;
/** The genesis base fee (1 gwei, EIP-1559's initial value). */
export const INITIAL_BASE_FEE = 1_000_000_000n;
