/**
 * One history batch's JSON-RPC answer (the raw body bytes of `eth_getBlockByNumber(n, true)` and
 * `eth_getBlockReceipts(n)` for consecutive blocks) → its blocks' verified material, packed in one buffer. Pure: it
 * runs on the node's CPU pool (actors/node/tasks.ts), so parsing, converting and verifying a batch (hash, roots, bloom,
 * gas) leave the history lane's thread, and the pool's threads work on several batches at once. Each block is
 * written straight from the JSON as the chain tables store it (net/rpc/json-rlp.ts) and those bytes are verified
 * against its header (`verifyBlockMaterialBytes`: the checks of the lane's own `convert`, in the same order, on the
 * stored bytes). What crosses back is one byte buffer and a few numbers per block, not an object graph.
 *
 * Only a batch that is wholly well-formed and verified is answered; anything else (an error object, a malformed
 * answer, a block that fails verification) answers null, and the history lane resolves the same text on its own
 * path, which throws the error naming the block exactly as it always has.
 */
import { bytesToHex, type Hash } from '../eth/hex.js';
import type { BlockMaterial } from '../../store/chain-material.js';
import type { HistoryBlock } from './history-block.js';
import { verifyBlockMaterialBytes } from '../eth/verify-material.js';
import { jsonText } from '../rpc/client.js';
import { writeMaterial } from '../rpc/convert.js';
import { JsonFields } from '../rpc/json-fields.js';
import { BackWriter, materialViews, type MaterialMarks } from '../rpc/json-rlp.js';
import { convertRawBody, type HistoryEncoding } from './raw-batch.js';

export interface RpcBatchInput {
  /** The answer's body, as received (the history lane transfers it here, so it is not copied). */
  readonly bytes: Uint8Array;
  /** Request ids in call order: block, receipts, block, receipts, … */
  readonly ids: readonly number[];
  readonly from: number;
  readonly to: number;
  readonly pooledBlobRoots: boolean;
  /** How the batch was asked for: `json` (the default) or the raw `debug_` getters (net/history/raw-batch.ts). */
  readonly encoding?: HistoryEncoding;
}

/** One block of a packed batch: its number, hashes, and where its parts end in the buffer (receipts: -1 when none). */
export interface PackedBlock {
  readonly number: number;
  readonly hash: Hash;
  readonly parentHash: Hash;
  /** Ends of its hash, header, body and receipts in `bytes`; each part starts where the previous one ends. */
  readonly ends: readonly [number, number, number, number];
}

export interface PackedBatch {
  readonly bytes: Uint8Array;
  readonly blocks: readonly PackedBlock[];
}

/**
 * What the pool's task answers the history lane (actors/node/tasks.ts): the packed batch, or, when `convertRpcBatch`
 * answered null, the answer's bytes themselves (they were transferred to the pool), for the lane to resolve.
 */
export type RpcBatchOutcome = { readonly packed: PackedBatch } | { readonly refused: Uint8Array };

interface Response {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly error?: unknown;
}

/** The batch's verified blocks, packed; null when any answer or block is not as it must be (see above). */
export async function convertRpcBatch(input: RpcBatchInput): Promise<PackedBatch | null> {
  if (input.encoding === 'raw') {
    const blocks = convertRawBody(input.bytes, input.ids, input.from, input.to);
    return blocks && packBlocks(blocks);
  }
  let body: unknown;
  try {
    body = JSON.parse(jsonText(input.bytes));
  } catch {
    return null;
  }
  if (!Array.isArray(body)) return null;
  const byId = new Map<unknown, Response>();
  for (const entry of body as Response[]) if (typeof entry === 'object' && entry !== null) byId.set(entry.id, entry);
  const answers: unknown[] = [];
  for (const id of input.ids) {
    const entry = byId.get(id);
    if (entry === undefined || (entry.error !== undefined && entry.error !== null) || !('result' in entry)) return null;
    answers.push(entry.result);
  }
  // The blocks are written back to front into one buffer (net/rpc/json-rlp.ts), the last block first, so the
  // buffer reads front to back in block order; each is verified as soon as it is written.
  const writer = new BackWriter(Math.ceil(input.bytes.length / 2));
  const written: { number: number; hash: Hash; parentHash: Hash; marks: MaterialMarks }[] = [];
  try {
    for (let i = input.to - input.from; i >= 0; i -= 1) {
      const number = input.from + i;
      const block = answers[2 * i];
      const receipts = answers[2 * i + 1];
      if (block === null || typeof block !== 'object' || !Array.isArray(receipts) || new JsonFields(block, 'block').number('number') !== number) return null;
      const marks = writeMaterial(writer, block, receipts);
      const views = materialViews(writer, marks);
      const verified = verifyBlockMaterialBytes({ header: views.header, body: views.body, receipts: views.receipts, expectedHash: bytesToHex(views.hash) });
      written.push({ number, hash: verified.hash, parentHash: verified.header.parentHash, marks });
    }
  } catch {
    return null;
  }
  const bytes = writer.take();
  const total = bytes.length;
  const blocks = written.reverse().map(({ number, hash, parentHash, marks: { marks, receipts } }): PackedBlock => {
    const [, hashEnd, headerEnd, bodyEnd, end] = marks;
    return { number, hash, parentHash, ends: [total - hashEnd, total - headerEnd, total - bodyEnd, receipts ? total - end : -1] };
  });
  return { bytes, blocks };
}

/** Verified blocks → one packed buffer (each block's hash, header, body and receipts, in block order). */
export function packBlocks(blocks: readonly HistoryBlock[]): PackedBatch {
  let total = 0;
  for (const { material } of blocks) total += material.hash.length + material.header.length + material.body.length + (material.receipts?.length ?? 0);
  const bytes = new Uint8Array(total);
  let at = 0;
  const put = (part: Uint8Array): number => {
    bytes.set(part, at);
    at += part.length;
    return at;
  };
  const packed = blocks.map(({ number, hash, parentHash, material }): PackedBlock => {
    const hashEnd = put(material.hash);
    const headerEnd = put(material.header);
    const bodyEnd = put(material.body);
    return { number, hash, parentHash, ends: [hashEnd, headerEnd, bodyEnd, material.receipts ? put(material.receipts) : -1] };
  });
  return { bytes, blocks: packed };
}

/** A packed batch back to history blocks: material as views of the one buffer. */
export function unpackRpcBatch(batch: PackedBatch): HistoryBlock[] {
  const { bytes } = batch;
  let start = 0;
  return batch.blocks.map(({ number, hash, parentHash, ends }) => {
    const [hashEnd, headerEnd, bodyEnd, receiptsEnd] = ends;
    const material: BlockMaterial = {
      number,
      hash: bytes.subarray(start, hashEnd),
      header: bytes.subarray(hashEnd, headerEnd),
      body: bytes.subarray(headerEnd, bodyEnd),
      receipts: receiptsEnd === -1 ? null : bytes.subarray(bodyEnd, receiptsEnd),
    };
    start = receiptsEnd === -1 ? bodyEnd : receiptsEnd;
    if (bytesToHex(material.hash) !== hash) throw new Error(`packed history block ${number}: its hash bytes do not match ${hash}`);
    return { number, hash, parentHash, material };
  });
}
