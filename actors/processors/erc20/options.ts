/**
 * The erc20 kind's options: `tokens = "*"` (every log with the ERC-20 `Transfer` signature and exactly
 * three topics), or a list of addresses, each either `"0x…"` or `{address = "0x…", deployed_at = N}`
 * (the deployment block: coverage from there makes the token's balances exact).
 */
import { z } from 'zod';
import type { KindOptions } from '../../processor/kind.js';

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'expected a 0x-prefixed 20-byte hex address').transform((a) => a.toLowerCase());

export const TOKENS_OPTION = z.union([
  z.literal('*'),
  z.array(z.union([address, z.strictObject({ address, deployed_at: z.number().int().min(0) })])).min(1, 'expected at least one token, or "*"'),
]);

export interface Erc20Options {
  /** null: every token. */
  readonly tokens: ReadonlyMap<string, { readonly deployedAt: number | null }> | null;
}

export function erc20Options(raw: KindOptions): Erc20Options {
  const unexpected = Object.keys(raw).filter((key) => key !== 'tokens');
  if (unexpected.length > 0) throw new Error(`erc20 processors take only 'tokens', got '${unexpected[0]}'`);
  if (!Object.hasOwn(raw, 'tokens')) throw new Error("erc20 processors need 'tokens' (a list of token addresses, or \"*\")");
  const parsed = TOKENS_OPTION.safeParse(raw.tokens);
  if (!parsed.success) throw new Error(`tokens: ${parsed.error.issues[0]!.message}`);
  if (parsed.data === '*') return { tokens: null };
  const tokens = new Map<string, { deployedAt: number | null }>();
  for (const entry of parsed.data) {
    if (typeof entry === 'string') tokens.set(entry, { deployedAt: null });
    else tokens.set(entry.address, { deployedAt: entry.deployed_at });
  }
  return { tokens };
}
