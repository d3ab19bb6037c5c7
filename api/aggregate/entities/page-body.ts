/** A Page (spec §2.2) of pre-rendered rows followed by further top-level fields, as bytes. */
const OPEN = '{"data":[';
const COMMA = 0x2c;
const INITIAL_BYTES = 1 << 16;

/**
 * Writes a page's rows, each given as byte and string parts, straight into one growing buffer: every part is
 * copied once, and no Buffer is made per part.
 */
export class PageBytes {
  private bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  private length = 0;
  private rows = 0;

  constructor() {
    this.writeString(OPEN);
  }

  addRow(...rowParts: Array<Uint8Array | string>): void {
    if (this.rows > 0) {
      this.reserve(1);
      this.bytes[this.length++] = COMMA;
    }
    this.rows += 1;
    for (const part of rowParts) {
      if (typeof part === 'string') this.writeString(part);
      else {
        this.reserve(part.length);
        this.bytes.set(part, this.length);
        this.length += part.length;
      }
    }
  }

  finish(fields: Readonly<Record<string, unknown>>): Buffer {
    this.writeString(`],${JSON.stringify(fields).slice(1)}`);
    return this.bytes.subarray(0, this.length);
  }

  private writeString(text: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    this.reserve(text.length * 3);
    this.length += this.bytes.write(text, this.length, 'utf8');
  }

  private reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.bytes.length * 2, this.length + more));
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }
}

export function pageWithFields(rows: readonly Uint8Array[], fields: Readonly<Record<string, unknown>>): Buffer {
  const page = new PageBytes();
  for (const row of rows) page.addRow(row);
  return page.finish(fields);
}
