/**
 * Only the registry names the built-in kinds (issue 29 point 1): no file outside a kind's folder imports it
 * (`actors/kinds/<kind>/…`) but actors/kinds/registry.ts, so the lanes, the config and the API ask a kind for what
 * they need through the kind interface (actors/kinds/sdk/kind.ts). Proven on a small graph first.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PROJECT_ROOT } from '../support/paths.js';
import { readImportGraph, type ImportGraph } from './import-graph.js';

const REGISTRY = 'actors/kinds/registry.ts';

/** The kind folder a file lies in (`actors/kinds/<kind>/…`, the SDK aside), or null. */
function kindFolder(file: string): string | null {
  const match = /^actors\/kinds\/([^/]+)\//.exec(file);
  return match && match[1] !== 'sdk' ? match[1]! : null;
}

/** Every import of a kind's folder from outside it, but the registry's. */
function kindImports(graph: ImportGraph): string[] {
  const found: string[] = [];
  for (const [from, imports] of graph) {
    if (from === REGISTRY) continue;
    for (const to of imports) {
      const kind = kindFolder(to);
      if (kind !== null && kindFolder(from) !== kind) found.push(`${from} imports ${to}`);
    }
  }
  return found.sort();
}

test('an import of a kind from outside its folder is found, the registry\'s and a kind\'s own are not', () => {
  const graph = new Map<string, string[]>([
    ['actors/processor/block-input.ts', ['actors/kinds/blobs/transform.ts', 'actors/kinds/sdk/kind.ts']],
    ['actors/node/config-schema.ts', ['actors/kinds/erc20/options.ts', 'actors/kinds/registry.ts']],
    ['actors/kinds/registry.ts', ['actors/kinds/amm/index.ts']],
    ['actors/kinds/amm/index.ts', ['actors/kinds/amm/pools.ts', 'actors/kinds/erc20/balances.ts']],
  ]);
  assert.deepEqual(kindImports(graph), [
    'actors/kinds/amm/index.ts imports actors/kinds/erc20/balances.ts',
    'actors/node/config-schema.ts imports actors/kinds/erc20/options.ts',
    'actors/processor/block-input.ts imports actors/kinds/blobs/transform.ts',
  ]);
});

test('no lane, API or store file imports a kind: only the registry names them', () => {
  assert.deepEqual(kindImports(readImportGraph(PROJECT_ROOT)), []);
});
