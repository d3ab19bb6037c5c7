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
import { HttpError } from '../../../api/errors.js';
import type { Handler } from '../../../api/http.js';
import type { AggregateContext } from '../../../api/aggregate/aggregate-context.js';
import type { ConfiguredProcessor } from '../../../api/aggregate/configured-processors.js';
import { jsonBytesReply } from '../../../api/aggregate/json-body.js';
import type { QueryExtension, TargetResolver } from '../../../api/aggregate/kind-surface.js';
import { retainedOutput } from '../../../api/aggregate/query-extensions.js';
import { processorTables, progressOf, readCoverage } from '../../../api/aggregate/processor-reader.js';
import { stateOrigin, type BlockRange, type ProcessorProgress } from '../../../store/coverage.js';
import { balanceKey, decodeRow } from './balances.js';
import { erc20Options, type Erc20Options } from './options.js';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

function addressParam(raw: string, name: string): string {
  if (!ADDRESS.test(raw)) throw new HttpError('invalid_request', `path parameter '${name}' must be a 0x-prefixed 20-byte hex address`, { parameter: name, value: raw.slice(0, 80) });
  return raw.toLowerCase();
}

const optionsCache = new WeakMap<ConfiguredProcessor, Erc20Options>();

function optionsOf(processor: ConfiguredProcessor): Erc20Options {
  let options = optionsCache.get(processor);
  if (!options) {
    options = erc20Options(processor.options ?? {});
    optionsCache.set(processor, options);
  }
  return options;
}

/** The state reflects every block gap-free from genesis, or from at or before the token's deployment block (see store/coverage.ts stateOrigin). */
export function isExact(ranges: readonly BlockRange[], progress: ProcessorProgress, deployedAt: number | null): boolean {
  const origin = stateOrigin(ranges, progress);
  return origin !== null && origin <= Math.max(1, deployedAt ?? 0);
}

function balanceHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor, params } = target(request);
    const token = addressParam(params[0] ?? '', 'token');
    const address = addressParam(params[1] ?? '', 'address');
    const options = optionsOf(processor);
    const configured = options.tokens === null ? { deployedAt: null } : options.tokens.get(token);
    if (!configured) throw new HttpError('not_found', `processor '${processor.id}' does not follow token ${token}`, { processor: processor.id, token });
    const output = retainedOutput(context, processor);
    // The progress (its finalized block) before the row: the row's finality is derived from it (balances.ts servedFinality).
    const progress = progressOf(processor, processorTables(context.store, processor.instance));
    const key = balanceKey(token, address);
    const stored = output.entities?.get(key);
    const row = stored ? decodeRow(key, stored, progress.finalizedNumber) : null;
    const exact = isExact(output.ranges, progress, configured.deployedAt);
    const value = row?.balance ?? '0';
    return jsonBytesReply(Buffer.from(JSON.stringify({
      token,
      address,
      balance: exact ? value : null,
      ...(exact ? {} : { netChange: value }),
      exact,
      lastChange: row?.lastChange ?? null,
      finality: row?.finality ?? null,
      coverage: readCoverage(context.store, context.chainId, processor),
    })));
  };
}

export const ERC20_QUERY: QueryExtension = {
  name: 'erc20',
  endpoints: [{ path: '/balances/:token/:address', handler: balanceHandler }],
};
