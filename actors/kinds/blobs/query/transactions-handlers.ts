/**
 * `…/blobs/transactions?blockNumber=` (a Page of one block's BlobTransaction rows in canonical
 * transaction-index order) and `…/blobs/transactions/{hash}` (one BlobTransaction).
 */
import type { QueryReply, QueryRequest } from '../../sdk/query/index.js';
import { rangeCovered } from '../../sdk/tables.js';
import { blockTransactionRows, transactionRow } from './blob-entity-reads.js';

export function blockTransactions(request: QueryRequest): QueryReply {
  const output = request.output();
  const blockNumber = request.query.requiredBlockNumber('blockNumber');
  const requested = { fromBlock: blockNumber, toBlock: blockNumber };
  const coverage = request.coverage(requested);
  if (!rangeCovered(output.ranges, blockNumber, blockNumber)) throw request.rangeIncomplete(requested, coverage);
  const rows = output.entities ? blockTransactionRows(output.entities, blockNumber) : [];
  return request.page(rows, null, coverage);
}

export function oneTransaction(request: QueryRequest): QueryReply {
  const hash = request.path.transactionHash('hash');
  const output = request.output();
  const row = output.entities ? transactionRow(output.entities, hash) : undefined;
  if (!row) throw request.error('not_found', `processor '${request.processor.id}' holds no blob transaction ${hash}`, { txHash: hash });
  return request.json(row);
}
