/**
 * Where the ingest bench commits: a throwaway LMDB store in a temporary directory. A commit writes each block's
 * chain material (`putBlockMaterial`, what `recordBlocks` writes) and its blob-processor entity rows in one write
 * transaction, after checking that the blocks extend the previous one (the parent link, checked in order).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex, type Hash } from '../../net/eth/index.js';
import { trackDirectory } from '../leftovers.js';
import { putBlockMaterial } from '../../store/chain-material.js';
import { openStore, type BinaryTable, type Store } from '../../store/store.js';
import type { ProcessedBlock } from './process-block.js';

export interface IngestStore {
  commit(blocks: readonly ProcessedBlock[]): Promise<void>;
  close(): Promise<void>;
}

/** Rows cloned from a worker arrive as Uint8Array; LMDB's binary encoding wants Buffers (a view, not a copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function checkLink(previous: { number: number; hash: Hash } | null, block: ProcessedBlock): void {
  if (previous === null) return;
  if (block.parentHash !== previous.hash || block.material.number !== previous.number + 1) {
    throw new Error(`block ${block.material.number} does not extend block ${previous.number} (${previous.hash}): parent ${block.parentHash}`);
  }
}

function writeBlock(store: Store, entities: BinaryTable, block: ProcessedBlock): void {
  putBlockMaterial(store, block.material);
  for (const entry of block.entries) entities.put(asBuffer(entry.key), asBuffer(entry.value));
}

export function openIngestStore(chainId: number): IngestStore {
  const dataDir = mkdtempSync(join(tmpdir(), 'cdn-ingest-'));
  const removeDataDir = trackDirectory(dataDir);
  const store = openStore({ dataDir, chainId });
  const entities = store.processor('blobs').entities;
  let previous: { number: number; hash: Hash } | null = null;
  return {
    async commit(blocks) {
      for (const block of blocks) {
        checkLink(previous, block);
        previous = { number: block.material.number, hash: bytesToHex(block.material.hash) };
      }
      await store.write(() => {
        for (const block of blocks) writeBlock(store, entities, block);
      });
    },
    async close() {
      await store.close();
      removeDataDir();
    },
  };
}
