/**
 * The processor SDK's own version and the range check a kind's `sdk` declaration passes at load.
 * Ranges: `x.y.z` (exact), `^x.y.z` (same major; same minor when major is 0), `~x.y.z` (same minor),
 * `>=x.y.z`, and space-separated conjunctions (`>=1.0.0 <2.0.0`, with `<`).
 */
export const SDK_VERSION = '1.0.0';

const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

export type Version = readonly [number, number, number];

export function parseVersion(text: string): Version | null {
  const match = VERSION.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : null;
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i += 1) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

function satisfiesOne(version: Version, comparator: string): boolean | null {
  const op = /^(\^|~|>=|<|=)?(.*)$/.exec(comparator)!;
  const bound = parseVersion(op[2]!);
  if (!bound) return null;
  switch (op[1]) {
    case '^':
      if (compare(version, bound) < 0) return false;
      return bound[0] === 0 ? version[0] === 0 && version[1] === bound[1] : version[0] === bound[0];
    case '~':
      return compare(version, bound) >= 0 && version[0] === bound[0] && version[1] === bound[1];
    case '>=':
      return compare(version, bound) >= 0;
    case '<':
      return compare(version, bound) < 0;
    default:
      return compare(version, bound) === 0;
  }
}

/** True when `version` satisfies `range`; throws when the range is not one this SDK understands. */
export function satisfies(version: string, range: string): boolean {
  const parsed = parseVersion(version);
  if (!parsed) throw new RangeError(`'${version}' is not a semantic version x.y.z`);
  const comparators = range.trim().split(/\s+/);
  let all = true;
  for (const comparator of comparators) {
    const result = satisfiesOne(parsed, comparator);
    if (result === null) throw new RangeError(`SDK range '${range}' is not understood (use x.y.z, ^x.y.z, ~x.y.z, >=x.y.z, <x.y.z)`);
    all &&= result;
  }
  return all;
}
