/** A Page (spec §2.2) of pre-rendered rows followed by further top-level fields, as bytes. */
const OPEN = Buffer.from('{"data":[');
const COMMA = Buffer.from(',');

export function pageWithFields(rows: readonly Uint8Array[], fields: Readonly<Record<string, unknown>>): Buffer {
  const parts: Uint8Array[] = [OPEN];
  rows.forEach((row, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(row);
  });
  parts.push(Buffer.from(`],${JSON.stringify(fields).slice(1)}`, 'utf8'));
  return Buffer.concat(parts);
}
