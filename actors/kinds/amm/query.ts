/**
 * The amm kind's typed query extension (spec §4.4): `GET …/amm/pools/{address}` → the pool's row
 * (reserves or sqrtPriceX96/tick/liquidity, cumulative swap count and volumes, last change, finality)
 * plus `coverage`. An unconfigured pool, or one with no event in the covered blocks, is 404; a
 * malformed address 400.
 */
import { HttpError } from '../../../api/errors.js';
import type { Handler } from '../../../api/http.js';
import type { AggregateContext } from '../../../api/aggregate/aggregate-context.js';
import type { ConfiguredProcessor } from '../../../api/aggregate/configured-processors.js';
import type { QueryExtension, TargetResolver } from '../../../api/aggregate/kind-surface.js';
import { retainedOutput } from '../../../api/aggregate/query-extensions.js';
import { readCoverage } from '../../../api/aggregate/processor-reader.js';
import { ammOptions, type AmmOptions } from './options.js';
import { poolKey } from './pools.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const optionsCache = new WeakMap<ConfiguredProcessor, AmmOptions>();

function optionsOf(processor: ConfiguredProcessor): AmmOptions {
  let options = optionsCache.get(processor);
  if (!options) {
    options = ammOptions(processor.options ?? {});
    optionsCache.set(processor, options);
  }
  return options;
}

function poolHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor, params } = target(request);
    const raw = params[0] ?? '';
    if (!ADDRESS.test(raw)) throw new HttpError('invalid_request', "path parameter 'address' must be a 0x-prefixed 20-byte hex address", { parameter: 'address', value: raw.slice(0, 80) });
    const pool = raw.toLowerCase();
    const options = optionsOf(processor);
    if (options.pools !== null && !options.pools.has(pool)) throw new HttpError('not_found', `processor '${processor.id}' does not follow pool ${pool}`, { processor: processor.id, pool });
    const output = retainedOutput(context, processor);
    const stored = output.entities?.get(poolKey(pool));
    if (!stored) throw new HttpError('not_found', `processor '${processor.id}' has seen no event of pool ${pool} in its covered blocks`, { processor: processor.id, pool });
    const coverage = JSON.stringify(readCoverage(context.store, context.chainId, processor));
    // The stored row is JSON already: close it with the coverage instead of re-encoding it.
    return { body: Buffer.concat([stored.subarray(0, stored.length - 1), Buffer.from(`,"coverage":${coverage}}`)]), contentType: 'application/json' };
  };
}

export const AMM_QUERY: QueryExtension = {
  name: 'amm',
  endpoints: [{ path: '/pools/:address', handler: poolHandler }],
};
