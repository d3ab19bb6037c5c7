import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readChainFile } from '../../../actors/import/chain-file.js';
import { decodeChainRlp } from '../../../net/eth/chain-rlp.js';
import { hashHeader } from '../../../net/eth/header.js';
import { FIXTURES } from '../../support/paths.js';

test('the chunked chain-file reader yields the same blocks as a whole-file decode, whatever the chunk size', () => {
  const path = join(FIXTURES, 'execution-apis', 'chain.rlp');
  const expected = [...decodeChainRlp(readFileSync(path))].map((block) => hashHeader(block.header));
  for (const chunk of [1, 7, 4096, 1 << 20]) {
    const read = [...readChainFile(path, chunk)];
    assert.deepEqual(read.map(({ block }) => hashHeader(block.header)), expected, `chunk ${chunk}`);
    assert.deepEqual(read.map(({ index }) => index), expected.map((_, i) => i));
    assert.equal(read[0]!.offset, 0);
    assert.ok(read.every(({ offset }, i) => i === 0 || offset > read[i - 1]!.offset));
  }
});
