/**
 * What the blob-fee transform reads of a block's transactions: the type of each (to skip all but type 3) and every
 * field of the type-3 ones. `transformTransactions` builds that from canonical encodings (such as
 * `verifyBlockMaterialBytes` returns) by decoding only the blob transactions; full `Transaction`s fit too.
 */
import { decodeTransaction, type Eip4844Transaction, type TransactionType } from '../sdk/chain.js';

/**
 * A blob transaction decoded from its canonical `encoding`, which it keeps: the rows take the transaction hash and
 * the signing hash from those bytes instead of encoding the object again.
 */
export type EncodedBlobTransaction = Eip4844Transaction & { readonly encoding: Uint8Array };

export type TransformTransaction = Eip4844Transaction | EncodedBlobTransaction | { readonly type: Exclude<TransactionType, 'eip4844'> };

const TYPE_BY_BYTE: readonly (Exclude<TransactionType, 'eip4844' | 'legacy'> | undefined)[] = [undefined, 'eip2930', 'eip1559', undefined, 'eip7702'];
const BLOB_TYPE_BYTE = 0x03;

const STUBS = new Map<string, TransformTransaction>(
  (['legacy', 'eip2930', 'eip1559', 'eip7702'] as const).map((type) => [type, Object.freeze({ type })]),
);

/** Decodes type-3 encodings; any other is only typed (an unknown type byte still fails, through `decodeTransaction`). */
export function transformTransactions(encodings: readonly Uint8Array[]): TransformTransaction[] {
  return encodings.map((encoding) => {
    const first = encoding[0];
    if (first !== undefined && first >= 0xc0) return STUBS.get('legacy')!;
    const type = first === undefined ? undefined : TYPE_BY_BYTE[first];
    if (type !== undefined) return STUBS.get(type)!;
    if (first !== BLOB_TYPE_BYTE) return decodeTransaction(encoding) as never;
    return { ...(decodeTransaction(encoding) as Eip4844Transaction), encoding } satisfies EncodedBlobTransaction;
  });
}
