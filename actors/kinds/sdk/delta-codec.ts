/**
 * The canonical bytes of a kind's `map` output (an artifact's payload, spec §2.9): JSON text with tagged
 * values for what JSON lacks — `{"$bigint":"-12"}`, `{"$map":[[k,v],…]}`, `{"$bytes":"0x…"}` — and objects
 * whose keys start with `$` wrapped as `{"$object":[[k,v],…]}` so no user key is read as a tag. Key order is
 * insertion order; `map` is pure, so the same block gives the same bytes on every run. The text is valid
 * JSON, so the artifact routes serve it as it is stored.
 */

type Tagged = null | boolean | number | string | Tagged[] | { [key: string]: Tagged };

function tag(value: unknown, path: string): Tagged {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`map output at ${path} is ${value}: artifacts hold finite numbers only`);
      return value;
    case 'bigint':
      return { $bigint: value.toString() };
    case 'undefined':
      return null;
    case 'object': {
      if (value === null) return null;
      if (Array.isArray(value)) return value.map((item, index) => tag(item, `${path}[${index}]`));
      if (value instanceof Map) return { $map: [...value].map(([k, v], index) => [tag(k, `${path}.key${index}`), tag(v, `${path}.value${index}`)]) };
      if (value instanceof Uint8Array) return { $bytes: `0x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}` };
      const entries = Object.entries(value as Record<string, unknown>);
      if (entries.some(([key]) => key.startsWith('$'))) return { $object: entries.map(([k, v]) => [k, tag(v, `${path}.${k}`)]) };
      const out: { [key: string]: Tagged } = {};
      for (const [key, item] of entries) if (item !== undefined) out[key] = tag(item, `${path}.${key}`);
      return out;
    }
    default:
      throw new TypeError(`map output at ${path} is a ${typeof value}: artifacts hold data only`);
  }
}

function untag(value: Tagged): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(untag);
  const keys = Object.keys(value);
  if (keys.length === 1) {
    const [key] = keys as [string];
    const inner = value[key]!;
    if (key === '$bigint') return BigInt(inner as string);
    if (key === '$bytes') return Buffer.from((inner as string).slice(2), 'hex');
    if (key === '$map') return new Map((inner as Tagged[][]).map(([k, v]) => [untag(k!), untag(v!)]));
    if (key === '$object') return Object.fromEntries((inner as Tagged[][]).map(([k, v]) => [k as string, untag(v!)]));
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = untag(value[key]!);
  return out;
}

/** The canonical bytes of `deltas`. */
export function encodeDeltas(deltas: unknown): Buffer {
  return Buffer.from(JSON.stringify(tag(deltas, 'deltas')), 'utf8');
}

/** The deltas `encodeDeltas` wrote. */
export function decodeDeltas<D = unknown>(bytes: Uint8Array): D {
  return untag(JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')) as Tagged) as D;
}
