/**
 * Example processor kind: per-block gas and fee statistics (`kind = "custom"`, `module = "…/index.ts"`).
 *
 * For every block: gas used and limit, utilization, base fee, what the base fee burned, what senders
 * paid validators on top (priority fees: effective gas price minus base fee, times each transaction's
 * gas), and the transaction count. One row per block; a block's output depends on that block alone
 * (`block_local`). The node compiles this file at load; it imports only types.
 *
 * It declares the map/apply split instead of one `apply`: `map` (pure) computes a block's statistics and
 * `applyMapped` writes them with the block's finality, so the node can keep each finalized block's map output as
 * an artifact (`[processors.artifacts]`) and replay it into another instance (docs/artifacts.md).
 */
import type { ArtifactBlock, BlockInput, CollectionDescription, Finality, KindChange, KindContext } from 'chain-data-node/sdk';

interface GasStatsOptions {
  /** Blocks using at least this share of their gas limit (basis points) are flagged `congested`. */
  readonly congestedBps: number;
}

const ROW_PREFIX = 0x01;

function rowKey(blockNumber: number): Buffer {
  const key = Buffer.alloc(9);
  key[0] = ROW_PREFIX;
  key.writeBigUInt64BE(BigInt(blockNumber), 1);
  return key;
}

/** What a transaction paid per gas: its gas price, or base fee plus its capped priority fee. */
function effectiveGasPrice(tx: BlockInput['transactions'][number], baseFee: bigint): bigint {
  if ('gasPrice' in tx) return tx.gasPrice;
  const tip = tx.maxFeePerGas - baseFee < tx.maxPriorityFeePerGas ? tx.maxFeePerGas - baseFee : tx.maxPriorityFeePerGas;
  return baseFee + tip;
}

function statistics(block: BlockInput, options: GasStatsOptions) {
  const baseFee = block.header.baseFeePerGas ?? 0n;
  let priorityFees = 0n;
  let previousCumulative = 0n;
  block.transactions.forEach((tx, index) => {
    const receipt = block.receipts?.[index];
    const gasUsed = receipt ? receipt.cumulativeGasUsed - previousCumulative : 0n;
    previousCumulative = receipt?.cumulativeGasUsed ?? previousCumulative;
    priorityFees += (effectiveGasPrice(tx, baseFee) - baseFee) * gasUsed;
  });
  const utilizationBps = block.header.gasLimit === 0n ? 0 : Number((block.header.gasUsed * 10_000n) / block.header.gasLimit);
  return {
    blockNumber: block.number,
    blockHash: block.hash,
    timestamp: block.header.timestamp,
    gasUsed: block.header.gasUsed.toString(),
    gasLimit: block.header.gasLimit.toString(),
    utilizationBps,
    congested: utilizationBps >= options.congestedBps,
    baseFeePerGas: baseFee.toString(),
    burnedWei: (baseFee * block.header.gasUsed).toString(),
    priorityFeesWei: priorityFees.toString(),
    transactionCount: block.transactions.length,
  };
}

type Stats = ReturnType<typeof statistics>;
type Row = Stats & { finality: Finality };

const blocks: CollectionDescription = {
  name: 'blocks',
  description: 'One GasStats row per covered block, by block number.',
  schema: 'gas-stats.v1/GasStats',
  owns: (key) => key.length === 9 && key[0] === ROW_PREFIX,
  get(entities, key) {
    const value = entities.get(key);
    return value ? { key, value, position: key, meta: metaOf(value) } : undefined;
  },
  *scan(entities, scan) {
    const start = scan.after ? Buffer.concat([scan.after, Buffer.of(0)]) : rowKey(scan.fromBlock ?? 0);
    const end = scan.toBlock === null ? Buffer.of(ROW_PREFIX + 1) : rowKey(scan.toBlock + 1);
    for (const { key, value } of entities.getRange({ start, end })) yield { key, value, position: key, meta: metaOf(value) };
  },
  bounds(entities) {
    const first = [...entities.getRange({ start: Buffer.of(ROW_PREFIX), end: Buffer.of(ROW_PREFIX + 1), limit: 1 })][0];
    const last = [...entities.getRange({ start: Buffer.of(ROW_PREFIX + 1), end: Buffer.of(ROW_PREFIX), reverse: true, limit: 1 })][0];
    return first && last ? { fromBlock: Number(first.key.readBigUInt64BE(1)), toBlock: Number(last.key.readBigUInt64BE(1)) } : null;
  },
};

function metaOf(value: Buffer) {
  const row = JSON.parse(value.toString('utf8')) as Row;
  return { blockNumber: row.blockNumber, blockHash: row.blockHash, timestamp: row.timestamp, finality: row.finality };
}

function change(kind: string, key: Buffer, dataJson: string): KindChange {
  return { kind, key: key.toString('hex'), dataJson };
}

export default {
  name: 'gas_stats',
  version: '1.0.0',
  sdk: '^1.0.0',
  ordering: 'block_local' as const,
  needs: { bodies: true, receipts: true },
  changeSchema: 'gas-stats.v1',
  collections: [blocks],
  finalizedKind: 'gas_stats.block.finalized',
  options(raw: Readonly<Record<string, unknown>>): GasStatsOptions {
    const congestedBps = raw.congested_bps ?? 9000;
    if (typeof congestedBps !== 'number' || !Number.isInteger(congestedBps) || congestedBps < 0 || congestedBps > 10_000) {
      throw new Error(`options.congested_bps: expected an integer 0..10000, got ${JSON.stringify(congestedBps)}`);
    }
    return { congestedBps };
  },
  map: (block: BlockInput, options: GasStatsOptions): Stats => statistics(block, options),
  applyMapped(ctx: KindContext, stats: Stats, block: ArtifactBlock, finality: Finality): KindChange[] {
    const key = rowKey(block.number);
    const json = JSON.stringify({ ...stats, finality } satisfies Row);
    ctx.tables.entities.put(key, Buffer.from(json));
    return [change('gas_stats.block.put', key, json)];
  },
  undo(ctx: KindContext, number: number): KindChange[] {
    const key = rowKey(number);
    const stored = ctx.tables.entities.get(key);
    if (!stored) return [];
    ctx.tables.entities.remove(key);
    return [change('gas_stats.block.delete', key, Buffer.from(stored).toString('utf8'))];
  },
  finalize(ctx: KindContext, from: number, to: number): void {
    for (const { key, value } of ctx.tables.entities.getRange({ start: rowKey(from), end: rowKey(to + 1) })) {
      const row = JSON.parse(value.toString('utf8')) as Row;
      ctx.tables.entities.put(key, Buffer.from(JSON.stringify({ ...row, finality: 'finalized' })));
    }
  },
};
