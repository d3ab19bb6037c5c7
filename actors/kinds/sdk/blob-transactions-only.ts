/**
 * Partial material a kind may ask for (processor SDK; `KindNeeds.partial.blobTransactionsOnly`): a block's
 * transactions with only the blob (type 3) ones decoded, every other one typed and nothing more.
 * `blobTransactionsOnly` builds that from canonical encodings (as the lane reads a recorded body, or
 * `verifyBlockMaterialBytes` returns) by decoding only the blob transactions; full `Transaction`s fit the type too.
 */
import { decodeTransaction, type Eip4844Transaction, type TransactionType } from './chain.js';

/**
 * A blob transaction decoded from its canonical `encoding`, which it keeps: a kind can take the transaction hash
 * and the signing hash from those bytes instead of encoding the object again.
 */
export type EncodedBlobTransaction = Eip4844Transaction & { readonly encoding: Uint8Array };

export type BlobOnlyTransaction = Eip4844Transaction | EncodedBlobTransaction | { readonly type: Exclude<TransactionType, 'eip4844'> };

const TYPE_BY_BYTE: readonly (Exclude<TransactionType, 'eip4844' | 'legacy'> | undefined)[] = [undefined, 'eip2930', 'eip1559', undefined, 'eip7702'];
const BLOB_TYPE_BYTE = 0x03;

const STUBS = new Map<string, BlobOnlyTransaction>(
  (['legacy', 'eip2930', 'eip1559', 'eip7702'] as const).map((type) => [type, Object.freeze({ type })]),
);

/** Decodes type-3 encodings; any other is only typed (an unknown type byte still fails, through `decodeTransaction`). */
export function blobTransactionsOnly(encodings: readonly Uint8Array[]): BlobOnlyTransaction[] {
  return encodings.map((encoding) => {
    const first = encoding[0];
    if (first !== undefined && first >= 0xc0) return STUBS.get('legacy')!;
    const type = first === undefined ? undefined : TYPE_BY_BYTE[first];
    if (type !== undefined) return STUBS.get(type)!;
    if (first !== BLOB_TYPE_BYTE) return decodeTransaction(encoding) as never;
    return { ...(decodeTransaction(encoding) as Eip4844Transaction), encoding } satisfies EncodedBlobTransaction;
  });
}
