/**
 * The layering of ARCHITECTURE.md §2 as a test (issue 29 point 4, after Ponder's layering test): runtime/ imports
 * nothing of ours; store/ only runtime/; net/ only runtime/ and store/; api/ never actors/; and no import circle
 * crosses folders; a kind imports only the SDK and its own folder, and only the registry imports a kind (issue 29
 * point 1). The checks themselves are proven on small graphs first, so a rule that could not fail would show.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROJECT_ROOT } from '../support/paths.js';
import { crossFolderCycles, kindNameViolations, kindRoomViolations, layerViolations, readImportGraph } from './import-graph.js';

test('the layer rules catch an upward import and a circle across folders, and let a circle within a folder be', () => {
  const graph = new Map<string, string[]>([
    ['store/a.ts', ['net/eth/hex.ts', 'runtime/codec.ts']],
    ['net/eth/hex.ts', []],
    ['runtime/codec.ts', ['store/a.ts']],
    ['api/x/one.ts', ['api/y/two.ts']],
    ['api/y/two.ts', ['api/x/one.ts']],
    ['actors/p/a.ts', ['actors/p/b.ts']],
    ['actors/p/b.ts', ['actors/p/a.ts', 'api/x/one.ts']],
  ]);
  assert.deepEqual(layerViolations(graph), ['runtime/codec.ts imports store/a.ts', 'store/a.ts imports net/eth/hex.ts']);
  assert.deepEqual(crossFolderCycles(graph).map((cycle) => cycle.join(' ')).sort(), ['api/x/one.ts api/y/two.ts', 'runtime/codec.ts store/a.ts']);
});

test('the source tree keeps its layers: no folder imports one above it, no import circle crosses folders', () => {
  const graph = readImportGraph(PROJECT_ROOT);
  assert.ok(graph.size > 300, `read ${graph.size} files`);
  assert.deepEqual(layerViolations(graph), []);
  assert.deepEqual(crossFolderCycles(graph), []);
});

test('a kind imports only the SDK and its own folder, and only the registry imports a kind', () => {
  const graph = new Map<string, string[]>([
    ['actors/kinds/erc20/query.ts', ['actors/kinds/sdk/query/index.ts', 'actors/kinds/erc20/options.ts', 'api/errors.ts']],
    ['actors/kinds/amm/pools.ts', ['actors/kinds/erc20/balances.ts', 'store/coverage.ts']],
    ['actors/kinds/sdk/tables.ts', ['store/store.ts']],
    ['actors/kinds/registry.ts', ['actors/kinds/amm/index.ts', 'api/aggregate/kind-surface.ts']],
    ['actors/processor/block-input.ts', ['actors/kinds/blobs/transform.ts', 'actors/kinds/sdk/kind.ts']],
    ['actors/node/config-schema.ts', ['actors/kinds/erc20/options.ts', 'actors/kinds/registry.ts']],
  ]);
  assert.deepEqual(kindRoomViolations(graph), [
    'actors/kinds/amm/pools.ts imports actors/kinds/erc20/balances.ts',
    'actors/kinds/amm/pools.ts imports store/coverage.ts',
    'actors/kinds/erc20/query.ts imports api/errors.ts',
  ]);
  assert.deepEqual(kindNameViolations(graph), [
    'actors/kinds/amm/pools.ts imports actors/kinds/erc20/balances.ts',
    'actors/node/config-schema.ts imports actors/kinds/erc20/options.ts',
    'actors/processor/block-input.ts imports actors/kinds/blobs/transform.ts',
  ]);
  const tree = readImportGraph(PROJECT_ROOT);
  assert.deepEqual(kindRoomViolations(tree), []);
  assert.deepEqual(kindNameViolations(tree), []);
});
