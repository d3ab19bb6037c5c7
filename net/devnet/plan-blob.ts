/**
 * EIP-4844 blob transactions to a rollup inbox. Each carries 1–6 versioned hashes (0x01 ‖ 31 random bytes, the
 * shape of a KZG commitment's sha256) and a blob fee cap drawn from what its sender is willing to pay.
 */
import { bytesToHex, type Hash } from '../eth/index.js';
import { encodeCall, functionSelector, uint } from './abi.js';
import { NO_STATE_CHANGE, type BlockContext, type TransactionDraft } from './block-context.js';
import { DEVNET_CONTRACTS } from './contracts.js';
import { estimatedGasLimit, feeMarketFields } from './fees.js';

const SUBMIT_SELECTOR = functionSelector('submitBatch(uint256)');
const VERSIONED_HASH_VERSION_KZG = 0x01;

/**
 * The most a blob sender pays per blob gas: log-uniform in [10^7, 10^10] wei. Blob transactions whose cap is below
 * the block's blob base fee wait, so demand falls as the price rises and the blob fee cannot grow without bound.
 */
export function blobFeeWillingness(ctx: BlockContext): bigint {
  const thousandths = BigInt(Math.floor(1000 * 10 ** (3 * ctx.rng.float())));
  return thousandths * 10_000n;
}

function versionedHash(ctx: BlockContext): Hash {
  const bytes = ctx.rng.bytes(32);
  bytes[0] = VERSIONED_HASH_VERSION_KZG;
  return bytesToHex(bytes);
}

export function draftBlobTransaction(ctx: BlockContext, sender: number, blobs: number, maxFeePerBlobGas: bigint): TransactionDraft {
  const gasUsed = BigInt(ctx.rng.between(21_600, 60_000));
  const input = encodeCall(SUBMIT_SELECTOR, [uint(BigInt(ctx.rng.int(1_000_000_000)))]);
  return {
    senderIndex: sender,
    unsigned: {
      type: 'eip4844',
      chainId: ctx.chainId,
      nonce: ctx.state.nonces[sender]!,
      ...feeMarketFields(ctx),
      gas: estimatedGasLimit(ctx, gasUsed),
      to: ctx.rng.pick(DEVNET_CONTRACTS.rollupInboxes),
      value: 0n,
      input,
      accessList: [],
      maxFeePerBlobGas,
      blobVersionedHashes: Array.from({ length: blobs }, () => versionedHash(ctx)),
    },
    gasUsed,
    status: 'success',
    logs: [],
    apply: NO_STATE_CHANGE,
  };
}
