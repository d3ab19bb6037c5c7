/**
 * `…/blobs/transactions?blockNumber=` (a Page of one block's BlobTransaction rows in canonical
 * transaction-index order) and `…/blobs/transactions/{hash}` (one BlobTransaction).
 */
import { HttpError } from '../../../../api/errors.js';
import type { Handler } from '../../../../api/http.js';
import { rangeCovered } from '../../../../store/coverage.js';
import type { AggregateContext } from '../../../../api/aggregate/aggregate-context.js';
import { jsonBytesReply, pageBytes } from '../../../../api/aggregate/json-body.js';
import { readCoverage } from '../../../../api/aggregate/processor-reader.js';
import { requiredBlockNumber } from '../../../../api/aggregate/query-params.js';
import { rangeIncomplete } from '../../../../api/aggregate/range-incomplete.js';
import { blockTransactionRows, transactionRow } from './blob-entity-reads.js';
import { retainedOutput, type TargetResolver } from './blob-query-target.js';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function blockTransactionsHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor } = target(request);
    const output = retainedOutput(context, processor);
    const blockNumber = requiredBlockNumber(request.query, 'blockNumber');
    const requested = { fromBlock: blockNumber, toBlock: blockNumber };
    const coverage = readCoverage(context.store, context.chainId, processor, requested);
    if (!rangeCovered(output.ranges, blockNumber, blockNumber)) throw rangeIncomplete(requested, coverage);
    const rows = output.entities ? blockTransactionRows(output.entities, blockNumber) : [];
    return jsonBytesReply(pageBytes(rows, null, coverage));
  };
}

export function oneTransactionHandler(context: AggregateContext, target: TargetResolver): Handler {
  return (request) => {
    const { processor, params } = target(request);
    const hash = params[0] ?? '';
    if (!TX_HASH.test(hash)) throw new HttpError('invalid_request', 'the transaction hash must be 0x followed by 64 hex digits', { parameter: 'hash' });
    const output = retainedOutput(context, processor);
    const row = output.entities ? transactionRow(output.entities, hash) : undefined;
    if (!row) throw new HttpError('not_found', `processor '${processor.id}' holds no blob transaction ${hash.toLowerCase()}`, { txHash: hash.toLowerCase() });
    return jsonBytesReply(row);
  };
}
