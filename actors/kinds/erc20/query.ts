/**
 * The erc20 kind's typed query extension (spec §4.4): `GET …/erc20/balances/{token}/{address}` →
 * `{token, address, balance, exact, lastChange, finality, coverage}`.
 *
 * `exact` is true only when the state reflects every block gap-free from genesis (block 1: genesis has
 * no transactions) or from at or before the token's configured `deployed_at` — by the instance's own
 * coverage, or by the savepoint it was seeded from continued gap-free. Otherwise the stored value
 * is the net change since the instance's first block: `balance` is null and `netChange` carries it.
 * A holder of a served token without a row is `"0"`; an unconfigured token is 404; a malformed
 * address 400.
 */
import { instanceOptions, type QueryExtension, type QueryRequest } from '../sdk/query/index.js';
import { stateOrigin, type BlockRange, type ProcessorProgress } from '../sdk/tables.js';
import { balanceKey, decodeRow } from './balances.js';
import { erc20Options } from './options.js';

const optionsOf = instanceOptions(erc20Options);

/** The state reflects every block gap-free from genesis, or from at or before the token's deployment block (see store/coverage.ts stateOrigin). */
export function isExact(ranges: readonly BlockRange[], progress: ProcessorProgress, deployedAt: number | null): boolean {
  const origin = stateOrigin(ranges, progress);
  return origin !== null && origin <= Math.max(1, deployedAt ?? 0);
}

function balanceReply(request: QueryRequest) {
  const { processor } = request;
  const token = request.path.address('token');
  const address = request.path.address('address');
  const options = optionsOf(processor);
  const configured = options.tokens === null ? { deployedAt: null } : options.tokens.get(token);
  if (!configured) throw request.error('not_found', `processor '${processor.id}' does not follow token ${token}`, { processor: processor.id, token });
  const output = request.output();
  // The progress (its finalized block) before the row: the row's finality is derived from it (balances.ts servedFinality).
  const progress = request.progress();
  const key = balanceKey(token, address);
  const stored = output.entities?.get(key);
  const row = stored ? decodeRow(key, stored, progress.finalizedNumber) : null;
  const exact = isExact(output.ranges, progress, configured.deployedAt);
  const value = row?.balance ?? '0';
  return request.json(Buffer.from(JSON.stringify({
    token,
    address,
    balance: exact ? value : null,
    ...(exact ? {} : { netChange: value }),
    exact,
    lastChange: row?.lastChange ?? null,
    finality: row?.finality ?? null,
    coverage: request.coverage(),
  })));
}

export const ERC20_QUERY: QueryExtension = {
  name: 'erc20',
  endpoints: [{ path: '/balances/:token/:address', handle: balanceReply }],
};
