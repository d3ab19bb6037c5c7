/**
 * Reading typed fields from upstream JSON-RPC objects: the one place where upstream JSON is validated. Quantities
 * become bigints, data becomes lower-case 0x-hex, and a missing or malformed field throws `UpstreamFormatError`
 * naming the object and the field.
 */
import type { Address, Hash, Hex } from '../eth/hex.js';
import { UpstreamFormatError } from './errors.js';

const QUANTITY = /^0x[0-9a-fA-F]+$/;
const DATA = /^0x(?:[0-9a-fA-F]{2})*$/;

export class JsonFields {
  private readonly object: Readonly<Record<string, unknown>>;

  constructor(value: unknown, readonly subject: string) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UpstreamFormatError(subject, '(itself)', `expected an object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`);
    }
    this.object = value as Record<string, unknown>;
  }

  has(name: string): boolean {
    return this.object[name] !== undefined && this.object[name] !== null;
  }

  raw(name: string): unknown {
    return this.object[name];
  }

  quantity(name: string): bigint {
    const value = this.object[name];
    if (typeof value !== 'string' || !QUANTITY.test(value)) throw this.invalid(name, 'a 0x-hex quantity', value);
    return BigInt(value);
  }

  optionalQuantity(name: string): bigint | undefined {
    return this.has(name) ? this.quantity(name) : undefined;
  }

  /** A quantity that fits a JavaScript number (block numbers, timestamps, indexes). */
  number(name: string): number {
    const value = this.quantity(name);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw this.invalid(name, 'a quantity below 2^53', `0x${value.toString(16)}`);
    return Number(value);
  }

  data(name: string): Hex {
    const value = this.object[name];
    if (typeof value !== 'string' || !DATA.test(value)) throw this.invalid(name, '0x-hex bytes', value);
    return value.toLowerCase() as Hex;
  }

  fixed(name: string, bytes: number): Hash {
    const value = this.data(name);
    if (value.length !== 2 + bytes * 2) throw this.invalid(name, `${bytes} bytes`, value);
    return value;
  }

  optionalFixed(name: string, bytes: number): Hash | undefined {
    return this.has(name) ? this.fixed(name, bytes) : undefined;
  }

  address(name: string): Address {
    return this.fixed(name, 20);
  }

  /** A recipient: null (or absent) for contract creation. */
  nullableAddress(name: string): Address | null {
    return this.has(name) ? this.address(name) : null;
  }

  list(name: string): readonly unknown[] {
    const value = this.object[name];
    if (!Array.isArray(value)) throw this.invalid(name, 'an array', value);
    return value;
  }

  /** An array of fixed-width hex values (storage keys, versioned hashes). */
  fixedList(name: string, bytes: number): Hash[] {
    return this.list(name).map((item, i) => {
      if (typeof item !== 'string' || !DATA.test(item) || item.length !== 2 + bytes * 2) throw this.invalid(`${name}[${i}]`, `${bytes} bytes of 0x-hex`, item);
      return item.toLowerCase() as Hash;
    });
  }

  invalid(name: string, expected: string, value: unknown): UpstreamFormatError {
    const shown = value === undefined ? 'nothing' : JSON.stringify(value)?.slice(0, 80) ?? String(value);
    return new UpstreamFormatError(this.subject, name, `expected ${expected}, got ${shown}`);
  }
}
