/**
 * Rows in PostgreSQL's COPY text format (tab-separated, `\N` for NULL, backslash escapes), the bootstrap's bulk path:
 * the columns key, data, block_number, block_hash, finality, change_sequence of tables.ts.
 */

/** A text value escaped for COPY text format: backslash, newline, carriage return and tab. */
export function copyEscape(value: string): string {
  return /[\\\n\r\t]/.test(value) ? value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t')) : value;
}

function nullable(value: string | number | null): string {
  return value === null ? '\\N' : copyEscape(String(value));
}

export interface CopyRow {
  readonly key: string;
  /** The row's JSON text. */
  readonly data: string;
  readonly blockNumber: number | null;
  readonly blockHash: string | null;
  readonly finality: string | null;
  readonly sequence: string;
}

/** One line (with its newline) of COPY text for `row`. */
export function copyLine(row: CopyRow): string {
  return `${copyEscape(row.key)}\t${copyEscape(row.data)}\t${nullable(row.blockNumber)}\t${nullable(row.blockHash)}\t${nullable(row.finality)}\t${row.sequence}\n`;
}
