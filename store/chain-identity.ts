/**
 * What chain a data directory holds, beyond its chain id: the genesis block recorded as canonical
 * block 0, and — for a generated chain such as the devnet — a fingerprint of the settings that
 * generate it. Starting a node whose configured chain differs from the stored one is refused with a
 * clear message, instead of letting the chain lane meet a foreign branch and fail closed over and over.
 *
 * meta key `chainGenerator`: the fingerprint recorded by the first start that names one.
 */
import { getCanonicalHash } from './chain-material.js';
import type { Store } from './store.js';

export interface ExpectedChain {
  /** 0x-hex hash of the configured genesis block. */
  readonly genesisHash: string;
  /** Settings that generate the chain (devnet), each as a string; absent for an upstream chain. */
  readonly generator?: Readonly<Record<string, string>>;
}

export class StoreChainIdentityError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`store at ${path} holds another chain than the configured one: ${problem}; use a new data_dir for this configuration, or restore the settings the store was created with`);
    this.name = 'StoreChainIdentityError';
    this.path = path;
  }
}

const GENERATOR_KEY = 'chainGenerator';

/** Checks the stored genesis and generator against the configured chain; records the generator on first use. */
export function ensureChainIdentity(store: Store, expected: ExpectedChain): void {
  if (expected.generator !== undefined) ensureGenerator(store, expected.generator);
  const genesis = getCanonicalHash(store, 0);
  if (genesis !== undefined) {
    const stored = `0x${genesis.toString('hex')}`;
    if (stored !== expected.genesisHash.toLowerCase()) throw new StoreChainIdentityError(store.path, `its genesis is ${stored}, the configured genesis is ${expected.genesisHash}`);
  }
}

/** Settings first: naming the changed setting helps more than naming the different genesis it causes. */
function ensureGenerator(store: Store, generator: Readonly<Record<string, string>>): void {
  const recorded = store.meta.get(GENERATOR_KEY);
  if (recorded === undefined) {
    store.meta.putSync(GENERATOR_KEY, JSON.stringify(generator));
    return;
  }
  const stored = parseGenerator(recorded);
  const keys = [...new Set([...Object.keys(stored), ...Object.keys(generator)])].sort();
  const differing = keys.filter((key) => stored[key] !== generator[key]);
  if (differing.length > 0) {
    const described = differing.map((key) => (stored[key] === undefined
      ? `${key} = ${generator[key]} is new since an earlier version made the store`
      : `${key} was ${stored[key]}, is now ${generator[key] ?? '(unset)'}`)).join('; ');
    throw new StoreChainIdentityError(store.path, `the settings that generate its chain changed (${described})`);
  }
}

function parseGenerator(value: unknown): Record<string, string> {
  if (typeof value === 'string') {
    const parsed: unknown = JSON.parse(value);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, string>;
  }
  return { generator: String(value) };
}
