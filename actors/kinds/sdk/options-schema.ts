/**
 * A built-in kind's options as the config file gives them (processor SDK, what a built-in needs beyond a user's
 * kind): the top-level `[[processors]]` keys it takes beside the common ones (erc20 `tokens`, amm `pools`), each
 * with its zod schema. The node derives an entry's keys and checks from the registry's declarations
 * (actors/node/processor-config.ts); a user's kind takes its options from the entry's `options` table instead,
 * parsed by its own `options` function.
 */
import { z } from 'zod';

export interface OptionKey {
  /** Validates (and normalizes) the key's value at config load; an issue's message says what was expected. */
  readonly schema: z.ZodType;
  /** Set when the kind needs the key: what a config without it is told to give, e.g. `token addresses or "*"`. */
  readonly required?: string;
}

/** A kind's keys by name, in the order the config lists them (none: the kind takes no options). */
export type OptionsSchema = Readonly<Record<string, OptionKey>>;

/** What a key's parser returns: the normalized value, or what was expected instead. */
export type ParsedOption<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

/** A key's schema from its parser: the parsed value, or an issue with the parser's message. */
export function parsedOption<T>(parse: (raw: unknown) => ParsedOption<T>): z.ZodType<T> {
  return z.unknown().transform((raw, ctx): T => {
    const parsed = parse(raw);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.message });
    return z.NEVER;
  });
}
