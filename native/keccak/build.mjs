// Builds the batch Keccak-256 addon (native/keccak) with node-gyp against the Node.js headers on this machine, and
// checks what it computes. Run by `npm ci` / `npm install` (the package's `prepare` script) and by
// `npm run build:native`. It never fails the install: without a compiler, headers or node-gyp, or when the built
// addon gives a wrong hash, it prints why and removes the addon, and the node hashes through its WebAssembly fallback
// (net/eth/keccak-batch.ts). `CDN_SKIP_NATIVE=1` skips the build.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const addonPath = join(here, 'build', 'Release', 'keccak_batch.node');
const TIMEOUT_MS = 10 * 60 * 1000;

function warn(message) {
  process.stderr.write(`native/keccak: ${message}; the node will hash with its WebAssembly fallback\n`);
}

/** node-gyp's entry script: npm's own (npm sets npm_config_node_gyp for scripts), else the one bundled with npm. */
function nodeGyp() {
  const candidates = [
    process.env.npm_config_node_gyp,
    join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  return candidates.find((path) => path && existsSync(path));
}

/** Where Node's own headers are (so node-gyp needs no download): npm's nodedir setting, else beside the node binary. */
function nodeDir() {
  if (process.env.npm_config_nodedir) return process.env.npm_config_nodedir;
  const prefix = join(dirname(process.execPath), '..');
  return existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? prefix : undefined;
}

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
  return names;
}

function main() {
  if (process.env.CDN_SKIP_NATIVE === '1') {
    warn('CDN_SKIP_NATIVE=1, not built');
    return;
  }
  const gyp = nodeGyp();
  if (gyp === undefined) {
    warn('node-gyp not found');
    return;
  }
  const dir = nodeDir();
  const args = [gyp, 'rebuild', ...(dir ? [`--nodedir=${dir}`] : [])];
  const result = spawnSync(process.execPath, args, { cwd: here, stdio: ['ignore', 'ignore', 'pipe'], timeout: TIMEOUT_MS, encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(addonPath, { force: true });
    const lines = (result.stderr ?? '').trim().split('\n');
    const tail = [...lines.filter((line) => /error/i.test(line) && !line.startsWith('gyp ERR!')).slice(0, 6), ...lines.slice(-3)].join('\n');
    warn(`build failed (${result.error?.message ?? `node-gyp exit ${result.status}`})${tail ? `:\n${tail}\n` : ''}`);
    return;
  }
  try {
    const names = selfCheck();
    process.stderr.write(`native/keccak: built; implementations on this CPU: ${names.join(', ')}\n`);
  } catch (error) {
    rmSync(addonPath, { force: true });
    warn(`the built addon failed its check (${error.message}), removed`);
  }
}

main();
