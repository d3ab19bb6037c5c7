// Bundles what a node start loads (run by `npm run build` after tsc): the CLI and every actor module, each with the
// worker host, into dist/bundle/ (esbuild, code splitting, so one thread never holds two copies of a shared module).
// A thread then loads a few large files instead of several hundred small ones: Node 20's ESM loader spends most of a
// worker's start resolving and instantiating modules, and every actor is its own worker thread.
//
// Entries are found, not listed: dist/cli.js, runtime/worker-entry.js and every source file under actors/ with
// `export default defineActor` (a new actor file is bundled on the next build). runtime/bundled.ts maps a dist
// module to its bundle; anything without one (test actors, a build without this step) runs from dist/ as before.
//
// Paths stay right: `import.meta.url` in a bundled module is rewritten to that module's own dist/ location, so the
// files it finds beside itself (the native addons, api/openapi.yaml, tasks.js) are found as before. Packages that
// load native binaries, spawn their own workers by file, or are loaded only on demand stay external.
import { build } from 'esbuild';
import { chmodSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const outdir = join(dist, 'bundle');

/** Kept as imports of the installed package: native addons (loaded by path at run time), piscina (starts its own
 * workers from its own files), typescript (9 MB, loaded only for a user's .ts processor kind), pg and pg-copy-streams
 * (loaded only by `chain-node sink postgres`; pg requires its optional native binding by name). */
const EXTERNAL = ['lmdb', 'msgpackr', 'msgpackr-extract', 'uWebSockets.js', 'secp256k1', 'snappy', 'c-kzg', 'piscina', 'typescript', 'classic-level', 'bufferutil', 'utf-8-validate', 'pg', 'pg-copy-streams', 'pg-native'];

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `actors/chain/actor.ts` → the bundle name `actors~chain~actor` (runtime/bundled.ts uses the same rule). */
const bundleName = (relativeJs) => relativeJs.replace(/\.js$/, '').split(sep).join('~');

// dist/cli.js (the package's bin) becomes a launcher of the CLI's bundle; tsc's output of cli.ts moves beside it.
const LAUNCHER_MARK = '// Written by build/bundle.mjs';
const cliCompiled = join(dist, 'cli.compiled.js');
const cliBin = join(dist, 'cli.js');
if (!readFileSync(cliBin, 'utf8').includes(LAUNCHER_MARK)) {
  renameSync(cliBin, cliCompiled);
  if (existsSync(`${cliBin}.map`)) renameSync(`${cliBin}.map`, `${cliCompiled}.map`);
}

const actorSources = sourceFiles(join(root, 'actors')).filter((file) => /^export default defineActor\b/m.test(readFileSync(file, 'utf8')));
const entries = ['cli.compiled.js', join('runtime', 'worker-entry.js'), ...actorSources.map((file) => relative(root, file).replace(/\.ts$/, '.js'))];
const entryPoints = Object.fromEntries(entries.map((file) => [file === 'cli.compiled.js' ? 'cli' : bundleName(file), join(dist, file)]));

/** Rewrites `import.meta.url` in each bundled dist/ module to that module's own location, relative to the bundle. */
const ownLocation = {
  name: 'own-location',
  setup(builder) {
    builder.onLoad({ filter: /\.js$/ }, (args) => {
      if (!args.path.startsWith(dist + sep) || args.path.startsWith(outdir + sep)) return undefined;
      const contents = readFileSync(args.path, 'utf8');
      if (!contents.includes('import.meta.url')) return undefined;
      const fromBundle = relative(outdir, args.path).split(sep).join('/');
      return { contents: contents.replaceAll('import.meta.url', `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`), loader: 'js', resolveDir: dirname(args.path) };
    });
  },
};

rmSync(outdir, { recursive: true, force: true });
const result = await build({
  entryPoints,
  outdir,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Packages written as CommonJS call require(); in an ES module it comes from createRequire.
  banner: { js: 'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);' },
  plugins: [ownLocation],
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
});
writeFileSync(cliBin, `#!/usr/bin/env node
${LAUNCHER_MARK}: the CLI runs from its bundle (bundle/cli.js) unless cli.ts was compiled again after it
// (then from cli.compiled.js, tsc's output, as do the workers: runtime/bundled.ts).
import { existsSync, statSync } from 'node:fs';
const bundle = new URL('./bundle/cli.js', import.meta.url);
const compiled = new URL('./cli.compiled.js', import.meta.url);
await import(existsSync(bundle) && statSync(bundle).mtimeMs >= statSync(compiled).mtimeMs ? bundle.href : compiled.href);
`);
chmodSync(cliBin, 0o755);
writeFileSync(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
const outputs = Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
process.stdout.write(`bundle: ${entries.length} entries (${actorSources.length} actors), ${outputs.length} files in ${relative(root, outdir)}\n`);
