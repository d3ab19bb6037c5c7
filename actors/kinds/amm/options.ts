/** The amm kind's options: `pools = "*"` (every Uniswap V2 pair / V3 pool event) or a list of pool addresses. */
import type { KindOptions } from '../sdk/kind.js';
import { isAddressHex } from '../sdk/chain.js';
import { parsedOption, type OptionsSchema, type ParsedOption } from '../sdk/options-schema.js';

export type PoolsOption = '*' | readonly string[];

export function parsePools(raw: unknown): ParsedOption<PoolsOption> {
  if (raw === '*') return { ok: true, value: '*' };
  if (!Array.isArray(raw) || raw.length === 0) return { ok: false, message: 'expected "*" or a non-empty list of pool addresses' };
  const value: string[] = [];
  for (const [i, entry] of raw.entries()) {
    if (typeof entry !== 'string' || !isAddressHex(entry)) return { ok: false, message: `entry ${i}: expected a 0x-prefixed 20-byte hex address` };
    value.push(entry.toLowerCase());
  }
  return { ok: true, value };
}

/** The kind's `[[processors]]` keys as the config checks them: `pools`, required. */
export const AMM_OPTIONS_SCHEMA: OptionsSchema = { pools: { schema: parsedOption(parsePools), required: 'pool addresses or "*"' } };

export interface AmmOptions {
  /** null: every pool. */
  readonly pools: ReadonlySet<string> | null;
}

export function ammOptions(raw: KindOptions): AmmOptions {
  const unexpected = Object.keys(raw).filter((key) => key !== 'pools');
  if (unexpected.length > 0) throw new Error(`amm processors take only 'pools', got '${unexpected[0]}'`);
  if (!Object.hasOwn(raw, 'pools')) throw new Error("amm processors need 'pools' (a list of pool addresses, or \"*\")");
  const parsed = parsePools(raw.pools);
  if (!parsed.ok) throw new Error(`pools: ${parsed.message}`);
  return { pools: parsed.value === '*' ? null : new Set(parsed.value) };
}
