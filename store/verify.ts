/**
 * The invariants `db verify` checks, as a list of check functions. Later work adds its own
 * with `registerVerifyCheck` (for example change-log or coverage invariants of a processor
 * kind). A check reads through the context and returns one or more results; a check that
 * throws is reported as failed with the error's message.
 */
import type { Database } from 'lmdb';
import { materialKeys } from './chain-material.js';
import { decodeJournalMove, JOURNAL_MOVE_BYTES } from './journal.js';
import { openTable, type RootEnvironment } from './store.js';
import { decodeU64Key, HASH_KEY_BYTES, U64_KEY_BYTES } from './keys.js';
import { epochFromBytes, isChainId, STORE_SCHEMA_VERSION, type RawStoreMeta } from './meta.js';
import { CHAIN_TABLES, FIXED_TABLES, tableSpecByName, type TableSpec } from './tables.js';

export interface VerifyCheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

export interface VerifyContext {
  readonly path: string;
  readonly env: RootEnvironment;
  readonly meta: RawStoreMeta;
  /** Every table present on disk. */
  readonly tableNames: readonly string[];
  /** A table opened with its registered encodings; undefined if absent or not registered. */
  table<V = unknown, K extends string | Buffer = Buffer>(name: string): Database<V, K> | undefined;
}

export interface VerifyCheck {
  readonly name: string;
  run(context: VerifyContext): VerifyCheckResult | readonly VerifyCheckResult[];
}

/** At most this many problems are spelled out per result; the rest are counted. */
const MAX_LISTED_PROBLEMS = 5;

const checks: VerifyCheck[] = [];

/** Adds a check to every later `db verify`; returns a function that removes it again. */
export function registerVerifyCheck(check: VerifyCheck): () => void {
  if (checks.some((existing) => existing.name === check.name)) throw new Error(`verify check ${check.name} is already registered`);
  checks.push(check);
  return () => {
    const index = checks.indexOf(check);
    if (index >= 0) checks.splice(index, 1);
  };
}

export function registeredVerifyChecks(): readonly VerifyCheck[] {
  return checks;
}

export function runVerifyChecks(context: VerifyContext): VerifyCheckResult[] {
  const results: VerifyCheckResult[] = [];
  for (const check of checks) {
    try {
      const outcome = check.run(context);
      results.push(...(Array.isArray(outcome) ? outcome : [outcome as VerifyCheckResult]));
    } catch (error) {
      results.push({ name: check.name, ok: false, detail: `check failed to run: ${(error as Error).message}` });
    }
  }
  return results;
}

/** Collects problems and turns them into one result with a bounded detail. */
class Problems {
  private readonly listed: string[] = [];
  private count = 0;
  constructor(private readonly name: string) {}
  add(problem: string): void {
    this.count++;
    if (this.listed.length < MAX_LISTED_PROBLEMS) this.listed.push(problem);
  }
  result(okDetail?: string): VerifyCheckResult {
    if (this.count === 0) return okDetail === undefined ? { name: this.name, ok: true } : { name: this.name, ok: true, detail: okDetail };
    const more = this.count > this.listed.length ? `; and ${this.count - this.listed.length} more` : '';
    return { name: this.name, ok: false, detail: `${this.listed.join('; ')}${more}` };
  }
}

function checkMeta(context: VerifyContext): VerifyCheckResult[] {
  const { meta } = context;
  const present = new Problems('meta.present');
  for (const [field, value] of Object.entries(meta)) if (value === undefined && field !== 'chainId') present.add(`${field} is missing`);
  const epoch = new Problems('meta.storeEpoch');
  if (epochFromBytes(meta.storeEpoch) === undefined) epoch.add('storeEpoch is not 8 non-zero bytes');
  const schema = new Problems('meta.schemaVersion');
  if (meta.schemaVersion !== STORE_SCHEMA_VERSION) {
    schema.add(`schema version ${JSON.stringify(meta.schemaVersion)} is not the supported version ${STORE_SCHEMA_VERSION}`);
  }
  const chain = new Problems('meta.chainId');
  if (meta.chainId !== undefined && !isChainId(meta.chainId)) chain.add(`chainId ${JSON.stringify(meta.chainId)} is not a positive integer`);
  if (meta.createdAt !== undefined && typeof meta.createdAt !== 'string') present.add('createdAt is not a string');
  return [present.result(), epoch.result(), schema.result(), chain.result()];
}

function checkTablesRegistered(context: VerifyContext): VerifyCheckResult[] {
  const known = new Problems('tables.registered');
  for (const name of context.tableNames) if (!tableSpecByName(name)) known.add(`table ${name} is not one this binary knows`);
  for (const spec of FIXED_TABLES) if (!context.tableNames.includes(spec.name)) known.add(`table ${spec.name} is missing`);
  const opens = new Problems('tables.open');
  for (const name of context.tableNames) {
    if (!tableSpecByName(name)) continue;
    try {
      const table = context.table(name);
      if (!table) opens.add(`table ${name} did not open`);
      else table.getKeysCount();
    } catch (error) {
      opens.add(`table ${name}: ${(error as Error).message}`);
    }
  }
  return [known.result(), opens.result(`${context.tableNames.length} tables`)];
}

function checkKeyWidths(context: VerifyContext): VerifyCheckResult[] {
  const results: VerifyCheckResult[] = [];
  for (const name of context.tableNames) {
    const spec = tableSpecByName(name);
    if (!spec || spec.keyEncoding !== 'binary' || (spec.keyWidth === undefined && spec.keyWidths === undefined && !spec.keyStartsWithU64)) continue;
    results.push(checkTableKeys(context, spec));
  }
  return results;
}

function checkTableKeys(context: VerifyContext, spec: TableSpec): VerifyCheckResult {
  const name = `keys:${spec.name}`;
  const problems = new Problems(name);
  const table = context.table<unknown, Buffer>(spec.name);
  if (!table) return { name, ok: false, detail: 'table did not open' };
  let previous: Buffer | undefined;
  let count = 0;
  for (const rawKey of table.getKeys()) {
    const key = Buffer.from(rawKey);
    count++;
    if (spec.keyWidth !== undefined && key.length !== spec.keyWidth) problems.add(`key ${key.toString('hex')} is ${key.length} bytes, expected ${spec.keyWidth}`);
    if (spec.keyWidths !== undefined && !spec.keyWidths.includes(key.length)) problems.add(`key ${key.toString('hex')} is ${key.length} bytes, expected ${spec.keyWidths.join(' or ')}`);
    if (spec.keyStartsWithU64 && key.length < U64_KEY_BYTES) problems.add(`key ${key.toString('hex')} is shorter than its u64 prefix`);
    if (previous && Buffer.compare(previous, key) >= 0) problems.add(`key ${key.toString('hex')} does not follow ${previous.toString('hex')}`);
    previous = key;
  }
  return problems.result(`${count} keys`);
}

function checkCanonicalChain(context: VerifyContext): VerifyCheckResult {
  const problems = new Problems('chain.canonical');
  const canonical = context.table<Buffer, Buffer>(CHAIN_TABLES.canonical.name);
  const headers = context.table<Buffer, Buffer>(CHAIN_TABLES.headers.name);
  const hashToNumber = context.table<Buffer, Buffer>(CHAIN_TABLES.hashToNumber.name);
  if (!canonical || !headers || !hashToNumber) return { name: 'chain.canonical', ok: false, detail: 'chain tables are missing' };
  let count = 0;
  for (const { key, value } of canonical.getRange()) {
    count++;
    if (key.length !== U64_KEY_BYTES) continue; // reported by keys:chain.canonical
    const number = decodeU64Key(key);
    if (value.length !== HASH_KEY_BYTES) {
      problems.add(`block ${number}: canonical hash is ${value.length} bytes`);
      continue;
    }
    const hash = Buffer.from(value);
    if (!materialKeys(Number(number), hash).some((key) => headers.doesExist(key))) problems.add(`block ${number}: header ${hex(hash)} is missing`);
    const mapped = hashToNumber.get(hash);
    if (!mapped) problems.add(`block ${number}: hashToNumber has no entry for ${hex(hash)}`);
    else if (mapped.length !== U64_KEY_BYTES || decodeU64Key(mapped) !== number) {
      problems.add(`block ${number}: hashToNumber maps ${hex(hash)} to ${mapped.length === U64_KEY_BYTES ? decodeU64Key(mapped) : 'a malformed value'}`);
    }
  }
  return problems.result(`${count} canonical blocks`);
}

function checkJournal(context: VerifyContext): VerifyCheckResult {
  const problems = new Problems('chain.journal');
  const journal = context.table<Buffer, Buffer>(CHAIN_TABLES.journal.name);
  if (!journal) return { name: 'chain.journal', ok: false, detail: 'chain.journal is missing' };
  let expected: bigint | undefined;
  let count = 0;
  for (const { key, value } of journal.getRange()) {
    count++;
    if (key.length !== U64_KEY_BYTES) continue; // reported by keys:chain.journal
    const sequence = decodeU64Key(key);
    if (expected !== undefined && sequence !== expected) problems.add(`sequence ${sequence} follows ${expected - 1n} (gap or disorder)`);
    expected = sequence + 1n;
    if (value.length !== JOURNAL_MOVE_BYTES) {
      problems.add(`sequence ${sequence}: move is ${value.length} bytes, expected ${JOURNAL_MOVE_BYTES}`);
      continue;
    }
    try {
      decodeJournalMove(value);
    } catch (error) {
      problems.add(`sequence ${sequence}: ${(error as Error).message}`);
    }
  }
  return problems.result(`${count} moves`);
}

function hex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

/** Opens a table on disk with its registered encodings, or undefined when the name is unknown. */
export function openRegisteredTable<V, K extends string | Buffer>(env: RootEnvironment, name: string): Database<V, K> | undefined {
  const spec = tableSpecByName(name);
  return spec ? openTable<V, K>(env, spec) : undefined;
}

registerVerifyCheck({ name: 'meta', run: checkMeta });
registerVerifyCheck({ name: 'tables', run: checkTablesRegistered });
registerVerifyCheck({ name: 'keys', run: checkKeyWidths });
registerVerifyCheck({ name: 'chain.canonical', run: checkCanonicalChain });
registerVerifyCheck({ name: 'chain.journal', run: checkJournal });
