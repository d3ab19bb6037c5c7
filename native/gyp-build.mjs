// Builds one Node-API addon of native/ with node-gyp against the Node.js headers on this machine, then runs its
// self-check. Used by each addon's build.mjs, run by `npm ci` / `npm install` (the package's `prepare` script) and
// by `npm run build:native`. It never fails the install: without a compiler, headers or node-gyp, or when the built
// addon fails its check, it prints why and removes the addon, and the node runs without it (each addon's README
// says what that costs). `CDN_SKIP_NATIVE=1` skips every build.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const TIMEOUT_MS = 10 * 60 * 1000;

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

/**
 * @param {{ name: string, dir: string, addonPath: string, without: string, check: () => string }} addon
 *   `name` labels the messages, `dir` holds binding.gyp, `without` says what the node does without the addon, and
 *   `check` loads the built addon, throws when it is wrong, and returns a line describing it.
 */
export function buildAddon({ name, dir, addonPath, without, check }) {
  const warn = (message) => process.stderr.write(`${name}: ${message}; ${without}\n`);
  if (process.env.CDN_SKIP_NATIVE === '1') {
    warn('CDN_SKIP_NATIVE=1, not built');
    return;
  }
  const gyp = nodeGyp();
  if (gyp === undefined) {
    warn('node-gyp not found');
    return;
  }
  const headers = nodeDir();
  const args = [gyp, 'rebuild', ...(headers ? [`--nodedir=${headers}`] : [])];
  const result = spawnSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], timeout: TIMEOUT_MS, encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(addonPath, { force: true });
    const lines = (result.stderr ?? '').trim().split('\n');
    const tail = [...lines.filter((line) => /error/i.test(line) && !line.startsWith('gyp ERR!')).slice(0, 6), ...lines.slice(-3)].join('\n');
    warn(`build failed (${result.error?.message ?? `node-gyp exit ${result.status}`})${tail ? `:\n${tail}\n` : ''}`);
    return;
  }
  try {
    process.stderr.write(`${name}: built; ${check()}\n`);
  } catch (error) {
    rmSync(addonPath, { force: true });
    warn(`the built addon failed its check (${error.message}), removed`);
  }
}
