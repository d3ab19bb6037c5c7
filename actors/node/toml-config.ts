/**
 * A TOML configuration file read against a zod schema (the node's, actors/node/config.ts; a relay's,
 * actors/relay/config.ts): TOML → `--set` overrides (each parsed by its key's type) → validation. Any problem is a
 * ConfigError naming the key, the value and what was expected.
 */
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';

export class ConfigError extends Error {
  constructor(readonly problems: ReadonlyArray<{ key: string; value: string; expected: string }>) {
    super(problems.map((p) => `config key '${p.key}' = ${p.value}: ${p.expected}`).join('\n'));
    this.name = 'ConfigError';
  }
}

/** Reads `file`, applies `overrides` (`dotted.key=value`) and validates the result against `schema`. */
export function readTomlConfig<S extends z.ZodType>(schema: S, file: string, overrides: readonly string[] = []): z.infer<S> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError([{ key: '--config', value: JSON.stringify(file), expected: `a readable TOML file (${(error as Error).message})` }]);
  }
  let raw: Record<string, unknown>;
  try {
    raw = toPlain(parseToml(text, { integersAsBigInt: false })) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError([{ key: '(file)', value: JSON.stringify(file), expected: `valid TOML: ${(error as Error).message.split('\n')[0]}` }]);
  }
  for (const override of overrides) applyOverride(schema, raw, override);
  return validateWith(schema, raw);
}

/** The schema's value of `raw`, or a ConfigError naming every key that is wrong. */
export function validateWith<S extends z.ZodType>(schema: S, raw: unknown): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.flatMap((issue) => describeIssue(schema, issue, raw)));
}

function describeIssue(schema: z.ZodType, issue: z.core.$ZodIssue, raw: unknown): Array<{ key: string; value: string; expected: string }> {
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(shapeAt(schema, issue.path.map(String)) ?? {});
    return issue.keys.map((key) => ({
      key: [...issue.path, key].join('.'),
      value: show(valueAt(raw, [...issue.path, key])),
      expected: `unknown key; expected one of: ${known.join(', ')}`,
    }));
  }
  return [{ key: issue.path.join('.') || '(root)', value: show(valueAt(raw, issue.path)), expected: issue.message }];
}

/** `dotted.key=value`: the value is parsed by the type the schema gives that key. */
function applyOverride(schema: z.ZodType, raw: Record<string, unknown>, override: string): void {
  const eq = override.indexOf('=');
  if (eq <= 0) throw new ConfigError([{ key: '--set', value: JSON.stringify(override), expected: 'dotted.key=value' }]);
  const key = override.slice(0, eq);
  const text = override.slice(eq + 1);
  const path = key.split('.');
  const leaf = schemaAt(schema, path);
  if (!leaf) throw new ConfigError([{ key, value: JSON.stringify(text), expected: 'a key that exists in the configuration schema' }]);
  const value = parseOverrideValue(key, text, leafType(leaf));
  let node = raw;
  for (const part of path.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function parseOverrideValue(key: string, text: string, type: string): unknown {
  const fail = (expected: string) => new ConfigError([{ key, value: JSON.stringify(text), expected }]);
  switch (type) {
    case 'string':
    case 'enum':
      return text;
    case 'number': {
      const value = Number(text);
      if (text.trim() === '' || !Number.isFinite(value)) throw fail('a number');
      return value;
    }
    case 'boolean':
      if (text === 'true' || text === 'false') return text === 'true';
      throw fail('true or false');
    default:
      try {
        return toPlain((parseToml(`value = ${text}`) as { value: unknown }).value);
      } catch {
        throw fail(`a TOML ${type} value`);
      }
  }
}

type SchemaNode = { def: { type: string; innerType?: SchemaNode; shape?: Record<string, SchemaNode> }; shape?: Record<string, SchemaNode> };

function unwrap(node: SchemaNode): SchemaNode {
  let current = node;
  while (current.def.innerType && ['default', 'prefault', 'optional', 'nullable', 'pipe', 'readonly'].includes(current.def.type)) current = current.def.innerType;
  return current;
}

function schemaAt(schema: z.ZodType, path: readonly string[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = schema as unknown as SchemaNode;
  for (const part of path) {
    const shape: Record<string, SchemaNode> | undefined = node ? unwrap(node).shape : undefined;
    node = shape && Object.hasOwn(shape, part) ? shape[part] : undefined;
    if (!node) return undefined;
  }
  return node;
}

function shapeAt(schema: z.ZodType, path: readonly string[]): Record<string, SchemaNode> | undefined {
  const node = schemaAt(schema, path);
  return node ? unwrap(node).shape : undefined;
}

function leafType(node: SchemaNode): string {
  return unwrap(node).def.type;
}

function valueAt(raw: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = raw;
  for (const part of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}

function show(value: unknown): string {
  if (value === undefined) return '(missing)';
  const text = typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/** smol-toml returns prototype-less objects and TOML dates; give the schema plain values. */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlain(v)]));
  return value;
}
