// Builds the batch Keccak-256 addon (native/keccak) through ../gyp-build.mjs and checks what it computes. Without
// it the node hashes through its WebAssembly fallback (net/eth/keccak-batch.ts).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '../gyp-build.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const addonPath = join(here, 'build', 'Release', 'keccak_batch.node');

/** keccak256 of '', 'abc' and 200 bytes of 0xa3 (three blocks' worth of padding cases), from every implementation. */
function selfCheck() {
  const addon = createRequire(import.meta.url)(addonPath);
  const inputs = [new Uint8Array(0), new TextEncoder().encode('abc'), new Uint8Array(200).fill(0xa3)];
  const expected = [
    'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
    '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45',
    '3a57666b048777f2c953dc4456f45a2588e1cb6f2da760122d530ac2ce607d4a',
  ];
  const total = inputs.reduce((sum, input) => sum + input.length, 0);
  const names = addon.implementations();
  for (let implementation = 0; implementation < names.length; implementation++) {
    const arena = new Uint8Array(total + 32 * inputs.length);
    const jobs = new Uint32Array(4 * inputs.length);
    let at = 0;
    inputs.forEach((input, i) => {
      arena.set(input, at);
      jobs.set([at, input.length, total + 32 * i, 0], 4 * i);
      at += input.length;
    });
    addon.hashJobs(arena, jobs, inputs.length, implementation);
    inputs.forEach((_, i) => {
      const got = Buffer.from(arena.subarray(total + 32 * i, total + 32 * (i + 1))).toString('hex');
      if (got !== expected[i]) throw new Error(`${names[implementation]} hashed input ${i} to ${got}, expected ${expected[i]}`);
    });
  }
  return [...names, ...streamCheck(addon, inputs, expected)];
}

/** The same three hashes from each running-Keccak implementation, fed in pieces, with a digest after each piece. */
function streamCheck(addon, inputs, expected) {
  const names = addon.streamImplementations();
  names.forEach((name, implementation) => {
    inputs.forEach((input, i) => {
      const stream = new addon.KeccakStream(implementation);
      const out = new Uint8Array(32);
      for (let at = 0; at < input.length; at += 67) {
        stream.absorb(input.subarray(at, at + 67));
        stream.digest(out);
      }
      stream.digest(out);
      const got = Buffer.from(out).toString('hex');
      if (got !== expected[i]) throw new Error(`stream ${name} hashed input ${i} to ${got}, expected ${expected[i]}`);
    });
  });
  return names.map((name) => `stream-${name}`);
}

buildAddon({
  name: 'native/keccak',
  dir: here,
  addonPath,
  without: 'the node will hash with its WebAssembly fallback',
  check: () => `implementations on this CPU: ${selfCheck().join(', ')}`,
});
