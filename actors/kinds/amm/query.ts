/**
 * The amm kind's typed query extension (spec §4.4): `GET …/amm/pools/{address}` → the pool's row
 * (reserves or sqrtPriceX96/tick/liquidity, cumulative swap count and volumes, last change, finality)
 * plus `coverage`. An unconfigured pool, or one with no event in the covered blocks, is 404; a
 * malformed address 400.
 */
import { instanceOptions, type QueryExtension, type QueryRequest } from '../sdk/query/index.js';
import { ammOptions } from './options.js';
import { poolKey } from './pools.js';

const optionsOf = instanceOptions(ammOptions);

function poolReply(request: QueryRequest) {
  const { processor } = request;
  const pool = request.path.address('address');
  const options = optionsOf(processor);
  if (options.pools !== null && !options.pools.has(pool)) throw request.error('not_found', `processor '${processor.id}' does not follow pool ${pool}`, { processor: processor.id, pool });
  const stored = request.output().entities?.get(poolKey(pool));
  if (!stored) throw request.error('not_found', `processor '${processor.id}' has seen no event of pool ${pool} in its covered blocks`, { processor: processor.id, pool });
  const coverage = JSON.stringify(request.coverage());
  // The stored row is JSON already: close it with the coverage instead of re-encoding it.
  return request.json(Buffer.concat([stored.subarray(0, stored.length - 1), Buffer.from(`,"coverage":${coverage}}`)]));
}

export const AMM_QUERY: QueryExtension = {
  name: 'amm',
  endpoints: [{ path: '/pools/:address', handle: poolReply }],
};
