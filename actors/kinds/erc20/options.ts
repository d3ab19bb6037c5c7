/**
 * The erc20 kind's options: `tokens = "*"` (every log with the ERC-20 `Transfer` signature and exactly
 * three topics), or a list of addresses, each either `"0x…"` or `{address = "0x…", deployed_at = N}`
 * (the deployment block: coverage from there makes the token's balances exact).
 */
import type { KindOptions } from '../sdk/kind.js';
import { isAddressHex } from '../sdk/chain.js';
import { parsedOption, type OptionsSchema, type ParsedOption } from '../sdk/options-schema.js';

export type TokensOption = '*' | ReadonlyArray<string | { readonly address: string; readonly deployed_at: number }>;

/** Validates `tokens`; returns a message naming what was expected, or the normalized (lower-case) value. */
export function parseTokens(raw: unknown): ParsedOption<TokensOption> {
  if (raw === '*') return { ok: true, value: '*' };
  if (!Array.isArray(raw) || raw.length === 0) return { ok: false, message: 'expected "*" or a non-empty list of token addresses' };
  const value: Array<string | { address: string; deployed_at: number }> = [];
  for (const [i, entry] of raw.entries()) {
    if (typeof entry === 'string' && isAddressHex(entry)) {
      value.push(entry.toLowerCase());
      continue;
    }
    const record = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : null;
    const keys = record ? Object.keys(record).sort().join(',') : '';
    if (record && keys === 'address,deployed_at' && typeof record.address === 'string' && isAddressHex(record.address)
      && Number.isSafeInteger(record.deployed_at) && (record.deployed_at as number) >= 0) {
      value.push({ address: record.address.toLowerCase(), deployed_at: record.deployed_at as number });
      continue;
    }
    return { ok: false, message: `entry ${i}: expected a 0x-prefixed 20-byte hex address, or {address = "0x…", deployed_at = <block number>}` };
  }
  return { ok: true, value };
}

/** The kind's `[[processors]]` keys as the config checks them: `tokens`, required. */
export const ERC20_OPTIONS_SCHEMA: OptionsSchema = { tokens: { schema: parsedOption(parseTokens), required: 'token addresses or "*"' } };

export interface Erc20Options {
  /** null: every token. */
  readonly tokens: ReadonlyMap<string, { readonly deployedAt: number | null }> | null;
}

export function erc20Options(raw: KindOptions): Erc20Options {
  const unexpected = Object.keys(raw).filter((key) => key !== 'tokens');
  if (unexpected.length > 0) throw new Error(`erc20 processors take only 'tokens', got '${unexpected[0]}'`);
  if (!Object.hasOwn(raw, 'tokens')) throw new Error("erc20 processors need 'tokens' (a list of token addresses, or \"*\")");
  const parsed = parseTokens(raw.tokens);
  if (!parsed.ok) throw new Error(`tokens: ${parsed.message}`);
  if (parsed.value === '*') return { tokens: null };
  const tokens = new Map<string, { deployedAt: number | null }>();
  for (const entry of parsed.value) {
    if (typeof entry === 'string') tokens.set(entry, { deployedAt: null });
    else tokens.set(entry.address, { deployedAt: entry.deployed_at });
  }
  return { tokens };
}
