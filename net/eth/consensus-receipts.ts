/**
 * Consensus receipts (`type || rlp([status, cumulativeGasUsed, bloom, logs])`, no prefix for a legacy one: what
 * `debug_getRawReceipts`, eth/68 and Era1 files carry) → the eth/69 list the chain tables store. Each receipt is
 * re-framed from slices of its own bytes; the bloom is dropped (verification recomputes it from the logs).
 */
import { RlpDecodeError } from './errors.js';
import { emptySpan, listPrefixLength, readRlpSpan, writeListPrefix } from './rlp-walk.js';

const RECEIPT = 'consensus receipt';

/** Consensus receipts → the eth/69 list `[[type, status, cumulativeGasUsed, logs], …]` (the bloom dropped). */
export function receiptsToEth69(receipts: readonly Uint8Array[]): Uint8Array {
  const span = emptySpan();
  // Per receipt: its type byte, where its list's status…cumulativeGasUsed and its logs lie, and its eth/69 payload size.
  const parts: { receipt: Uint8Array; type: number; fields: number; fieldsEnd: number; logs: number; logsEnd: number; payload: number }[] = [];
  let total = 0;
  for (const receipt of receipts) {
    const first = receipt[0];
    if (first === undefined) throw new RlpDecodeError(RECEIPT, 'empty receipt');
    const typed = first < 0x80;
    if (typed && (first < 1 || first > 4)) throw new RlpDecodeError(RECEIPT, `unknown receipt type ${first}`);
    const listAt = typed ? 1 : 0;
    readRlpSpan(span, receipt, listAt, receipt.length, RECEIPT);
    if (!span.list || span.end !== receipt.length) throw new RlpDecodeError(RECEIPT, 'expected one RLP list after the type byte');
    const listEnd = span.end;
    const fields = span.payload;
    const cumulative = readRlpSpan(span, receipt, readRlpSpan(span, receipt, fields, listEnd, RECEIPT).end, listEnd, RECEIPT).end;
    const bloom = readRlpSpan(span, receipt, cumulative, listEnd, RECEIPT);
    if (bloom.list || bloom.end - bloom.payload !== 256) throw new RlpDecodeError(RECEIPT, 'the bloom is not 256 bytes');
    const logs = bloom.end;
    const logsSpan = readRlpSpan(span, receipt, logs, listEnd, RECEIPT);
    if (!logsSpan.list || logsSpan.end !== listEnd) throw new RlpDecodeError(RECEIPT, 'expected 4 fields [status, cumulativeGasUsed, bloom, logs]');
    const payload = 1 + (cumulative - fields) + (listEnd - logs);
    parts.push({ receipt, type: typed ? first : 0, fields, fieldsEnd: cumulative, logs, logsEnd: listEnd, payload });
    total += listPrefixLength(payload) + payload;
  }
  const out = new Uint8Array(listPrefixLength(total) + total);
  let at = writeListPrefix(out, 0, total);
  for (const p of parts) {
    at = writeListPrefix(out, at, p.payload);
    out[at++] = p.type === 0 ? 0x80 : p.type;
    out.set(p.receipt.subarray(p.fields, p.fieldsEnd), at);
    at += p.fieldsEnd - p.fields;
    out.set(p.receipt.subarray(p.logs, p.logsEnd), at);
    at += p.logsEnd - p.logs;
  }
  return out;
}
