import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../actors/node/config.js';
import { receiptInterestOf } from '../../../actors/node/receipt-interest.js';
import { TRANSFER_TOPIC } from '../../../actors/kinds/erc20/transfers.js';
import { TOPICS } from '../../../actors/kinds/amm/events.js';
import type { CustomKindDescription } from '../../../actors/kinds/kind-catalog.js';

const TOKEN = '0xfa5b17fc3b43b0ecdd27cfa8810a44e52d9a2506';
const POOL = '0xC46983d4522754efcc42d2419448da0cf81b425b';

function configOf(processors: string) {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-interest-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, processors);
    return loadConfig(file).config;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const erc20 = (tokens: string) => `[[processors]]\nid = "erc20"\nkind = "erc20"\ntokens = ${tokens}\n`;
const amm = `[[processors]]\nid = "amm"\nkind = "amm"\npools = ["${POOL}"]\n`;
const blobs = '[[processors]]\nid = "blobs"\nkind = "blobs"\n';

test('receipt interest: the union of the log processors\' addresses and topics (lower-cased, sorted)', () => {
  const interest = receiptInterestOf(configOf(erc20(`["${TOKEN}"]`) + amm), new Map());
  assert.deepEqual(interest, {
    addresses: [TOKEN, POOL.toLowerCase()].sort(),
    topics: [TRANSFER_TOPIC, ...Object.values(TOPICS)].map((t) => t.toLowerCase()).sort(),
  });
});

test('receipt interest: a processor of every contract widens the addresses to any, keeping the topics', () => {
  const interest = receiptInterestOf(configOf(erc20('"*"') + amm), new Map());
  assert.deepEqual(interest?.addresses, []);
  assert.ok(interest!.topics.includes(TRANSFER_TOPIC.toLowerCase() as `0x${string}`));
});

test('receipt interest: a processor that reads every block\'s receipts (blobs) makes it null: all receipts are fetched', () => {
  assert.equal(receiptInterestOf(configOf(erc20(`["${TOKEN}"]`) + blobs), new Map()), null);
});

test('receipt interest: a custom module that did not load counts as reading every receipt', () => {
  const config = configOf(erc20(`["${TOKEN}"]`) + '[[processors]]\nid = "mine"\nkind = "custom"\nmodule = "./missing.js"\n');
  const custom = new Map<string, CustomKindDescription>([['mine', { module: '/x/missing.js', kind: null, error: 'cannot load' }]]);
  assert.equal(receiptInterestOf(config, custom), null);
});
