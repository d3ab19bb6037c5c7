/**
 * Loads a user's processor kind (`[[processors]] kind = "custom"`, `module = "./path"`): an ES module
 * in JavaScript (`.js`, `.mjs`), or TypeScript (`.ts`, `.mts`) compiled at load with the TypeScript
 * compiler's transpiler (no type check, no build step for the user) into the data directory's
 * `custom-kinds/` cache. Its default export is a `defineProcessorKind` result or the plain definition
 * (then defined here): either way the identity and the SDK range are checked at load.
 *
 * A TypeScript kind is one file: it may import types (erased) but nothing at run time, because the
 * compiled copy runs from the cache directory.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProcessorKind } from './sdk/kind.js';
import { defineProcessorKind, KindDefinitionError, type ProcessorKindDefinition } from './sdk/define.js';

export class CustomKindError extends Error {
  override readonly name = 'CustomKindError';
}

function isProcessorKind(value: object): value is ProcessorKind {
  return typeof (value as { bind?: unknown }).bind === 'function' && !('map' in value) && !('apply' in value);
}

/** The TypeScript compiler is loaded only when a .ts kind is (it is large; built-in kinds never need it). */
async function compiledCopy(path: string, cacheDir: string): Promise<string> {
  const source = readFileSync(path, 'utf8');
  const ts = (await import('typescript')).default;
  const output = ts.transpileModule(source, {
    fileName: path,
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false, isolatedModules: true },
  });
  const syntax = output.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
  if (syntax) throw new CustomKindError(`${path} does not compile: ${ts.flattenDiagnosticMessageText(syntax.messageText, ' ')}`);
  const dir = join(cacheDir, 'custom-kinds');
  mkdirSync(dir, { recursive: true });
  const target = join(dir, `${createHash('sha256').update(path).update('\0').update(output.outputText).digest('hex').slice(0, 24)}.mjs`);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, output.outputText);
  renameSync(temporary, target);
  return target;
}

const loaded = new Map<string, ProcessorKind>();

/** The kind a module declares (loaded once per thread); throws CustomKindError naming the module and what is wrong. */
export async function loadKindModule(path: string, cacheDir: string): Promise<ProcessorKind> {
  const known = loaded.get(path);
  if (known) return known;
  const kind = await loadKindModuleOnce(path, cacheDir);
  loaded.set(path, kind);
  return kind;
}

async function loadKindModuleOnce(path: string, cacheDir: string): Promise<ProcessorKind> {
  const extension = extname(path);
  let file: string;
  try {
    file = extension === '.ts' || extension === '.mts' ? await compiledCopy(path, cacheDir) : path;
  } catch (error) {
    throw error instanceof CustomKindError ? error : new CustomKindError(`processor module ${path} cannot be read: ${(error as Error).message}`);
  }
  let module: { default?: unknown };
  try {
    module = await import(pathToFileURL(file).href) as { default?: unknown };
  } catch (error) {
    throw new CustomKindError(`processor module ${path} failed to load: ${(error as Error).message}`);
  }
  const exported = module.default;
  if (typeof exported !== 'object' || exported === null) throw new CustomKindError(`processor module ${path} has no default export of a processor kind (use export default defineProcessorKind({...}))`);
  if (isProcessorKind(exported)) return exported;
  try {
    return defineProcessorKind(exported as ProcessorKindDefinition<unknown, unknown>);
  } catch (error) {
    if (error instanceof KindDefinitionError) throw new CustomKindError(`processor module ${path}: ${error.message}`);
    throw new CustomKindError(`processor module ${path} is not a valid kind definition: ${(error as Error).message}`);
  }
}
