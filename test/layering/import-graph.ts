/**
 * The source tree's import graph, read with the TypeScript compiler's parser (static `import` and `export … from`,
 * type-only ones included: a type is a dependency too), and the layering rules of ARCHITECTURE.md §2 checked over it
 * (issue 29 point 4): which top-level folder may import which, and no import circle across folders.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** File (project-relative, `/`-separated) → the project files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

export const LAYERED_FOLDERS = ['runtime', 'store', 'net', 'actors', 'api'] as const;

/** Reads every `.ts` file under the layered folders of `root`. */
export function readImportGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const folder of LAYERED_FOLDERS) {
    for (const file of tsFiles(join(root, folder))) graph.set(projectPath(root, file), importsOf(root, file));
  }
  return graph;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

function projectPath(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

function importsOf(root: string, file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const imports: string[] = [];
  source.forEachChild((node) => {
    if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) return;
    const specifier = node.moduleSpecifier;
    if (specifier === undefined || !ts.isStringLiteral(specifier) || !specifier.text.startsWith('.')) return;
    imports.push(projectPath(root, resolve(dirname(file), specifier.text.replace(/\.js$/, '.ts'))));
  });
  return imports;
}

/** Which top-level folders a folder may import besides itself (ARCHITECTURE.md §2, issue 29 point 4). */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  runtime: [],
  store: ['runtime'],
  net: ['runtime', 'store'],
  api: ['runtime', 'store', 'net'],
  actors: ['runtime', 'store', 'net', 'api'],
};

const topFolder = (file: string): string => file.split('/')[0]!;
const folderOf = (file: string): string => file.slice(0, file.lastIndexOf('/'));

/** Every import that reaches a folder its file's folder may not import. */
export function layerViolations(graph: ImportGraph): string[] {
  const violations: string[] = [];
  for (const [from, imports] of graph) {
    const allowed = MAY_IMPORT[topFolder(from)] ?? [];
    for (const to of imports) {
      const target = topFolder(to);
      if (target !== topFolder(from) && !allowed.includes(target)) violations.push(`${from} imports ${to}`);
    }
  }
  return violations.sort();
}

/** Import circles (strongly connected files) whose files lie in more than one folder. */
export function crossFolderCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const to of graph.get(file) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file)!, index.get(to)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    if (new Set(component.map(folderOf)).size > 1) cycles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return cycles;
}

/** A built-in kind's folder (`actors/kinds/<kind>/…`, the SDK aside), or null for any other file. */
function kindOf(file: string): string | null {
  const match = /^actors\/kinds\/([^/]+)\//.exec(file);
  return match && match[1] !== 'sdk' ? match[1]! : null;
}

/**
 * Every import by which a kind leaves its room (issue 29 point 1): a file in `actors/kinds/<kind>/` imports only
 * the SDK (`actors/kinds/sdk/`) and its own folder.
 */
export function kindRoomViolations(graph: ImportGraph): string[] {
  const violations: string[] = [];
  for (const [from, imports] of graph) {
    const kind = kindOf(from);
    if (kind === null) continue;
    for (const to of imports) {
      if (!to.startsWith('actors/kinds/sdk/') && !to.startsWith(`actors/kinds/${kind}/`)) violations.push(`${from} imports ${to}`);
    }
  }
  return violations.sort();
}

/** The one file that names the built-in kinds (imports their folders). */
const KIND_REGISTRY = 'actors/kinds/registry.ts';

/**
 * Every import of a kind's folder from outside it (issue 29 point 1): only the registry names the kinds, so a lane,
 * the config or the API asks a kind for what it needs through the kind interface (actors/kinds/sdk/kind.ts).
 */
export function kindNameViolations(graph: ImportGraph): string[] {
  const violations: string[] = [];
  for (const [from, imports] of graph) {
    if (from === KIND_REGISTRY) continue;
    for (const to of imports) {
      const kind = kindOf(to);
      if (kind !== null && kindOf(from) !== kind) violations.push(`${from} imports ${to}`);
    }
  }
  return violations.sort();
}
