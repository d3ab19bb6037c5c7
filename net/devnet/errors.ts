/** Errors of the devnet: a config the generator cannot run with names the key, the value and what was expected. */

export class DevnetConfigError extends Error {
  override name = 'DevnetConfigError';
  constructor(readonly key: string, readonly value: unknown, readonly expected: string) {
    super(`Invalid devnet config: devnet.${key} = ${formatValue(value)}; expected ${expected}.`);
  }
}

function formatValue(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === undefined) return 'undefined';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
