/**
 * The finalized execution anchor as one Beacon API endpoint reports it: the finalized checkpoint
 * (`/eth/v1/beacon/states/head/finality_checkpoints`) and that block's execution payload
 * (`/eth/v2/beacon/blocks/{root}` → `execution_payload.block_number`/`block_hash`).
 */
import { hexToBytes, type Hex } from '../eth/hex.js';
import type { BeaconClient } from './api-client.js';
import type { BlockRef } from '../../store/chain-types.js';

export interface FinalizedAnchor {
  readonly epoch: number;
  readonly root: Hex;
  /** The finalized block's execution payload; null before the merge or at genesis. */
  readonly execution: BlockRef | null;
}

export type AnchorReport =
  | { readonly endpoint: string; readonly anchor: FinalizedAnchor }
  | { readonly endpoint: string; readonly error: string };

const ZERO_ROOT = `0x${'0'.repeat(64)}`;

function hex32(value: unknown, what: string): Hex {
  if (typeof value !== 'string') throw new Error(`${what}: expected 0x-hex of 32 bytes`);
  hexToBytes(value, 32);
  return value.toLowerCase() as Hex;
}

function decimal(value: unknown, what: string): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new Error(`${what}: expected a decimal string`);
  return Number(value);
}

function objectAt(value: unknown, path: readonly string[], what: string): Record<string, unknown> {
  let node = value;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) throw new Error(`${what}: missing ${path.join('.')}`);
    node = (node as Record<string, unknown>)[key];
  }
  if (typeof node !== 'object' || node === null) throw new Error(`${what}: ${path.join('.')} is not an object`);
  return node as Record<string, unknown>;
}

export async function readFinalizedAnchor(client: BeaconClient): Promise<FinalizedAnchor> {
  const checkpoints = await client.get('/eth/v1/beacon/states/head/finality_checkpoints');
  if (checkpoints === null) throw new Error('finality_checkpoints answered 404');
  const finalized = objectAt(checkpoints, ['data', 'finalized'], 'finality_checkpoints');
  const epoch = decimal(finalized.epoch, 'finality_checkpoints data.finalized.epoch');
  const root = hex32(finalized.root, 'finality_checkpoints data.finalized.root');
  if (root === ZERO_ROOT) return { epoch, root, execution: null };
  const block = await client.get(`/eth/v2/beacon/blocks/${root}`);
  if (block === null) throw new Error(`the endpoint does not have its own finalized block ${root}`);
  const body = objectAt(block, ['data', 'message', 'body'], `block ${root}`);
  if (!Object.hasOwn(body, 'execution_payload')) return { epoch, root, execution: null };
  const payload = objectAt(body, ['execution_payload'], `block ${root}`);
  return {
    epoch,
    root,
    execution: { number: decimal(payload.block_number, `block ${root} execution_payload.block_number`), hash: hex32(payload.block_hash, `block ${root} execution_payload.block_hash`) },
  };
}

export type AgreementOutcome =
  | { readonly kind: 'agreed'; readonly anchor: FinalizedAnchor & { readonly execution: NonNullable<FinalizedAnchor['execution']> }; readonly endpoints: readonly string[] }
  /** Endpoints contradict each other: fail closed. */
  | { readonly kind: 'disagreement'; readonly reason: string }
  /** Not enough endpoints answered or agree yet (down, lagging, pre-merge). */
  | { readonly kind: 'insufficient'; readonly reason: string };

const describe = (a: FinalizedAnchor) => `epoch ${a.epoch} root ${a.root}${a.execution ? ` → block ${a.execution.number} ${a.execution.hash}` : ' (no execution payload)'}`;

/**
 * Agreement across endpoints: the newest finalized checkpoint that at least `minimum` endpoints
 * report identically (checkpoint and execution payload). Two endpoints naming different roots for
 * one epoch, or different execution hashes for one block number, disagree: nothing is agreed.
 */
export function decideAgreement(reports: readonly AnchorReport[], minimum: number): AgreementOutcome {
  const answered = reports.filter((r): r is Extract<AnchorReport, { anchor: FinalizedAnchor }> => 'anchor' in r);
  const conflicts: string[] = [];
  for (let i = 0; i < answered.length; i++) {
    for (let j = i + 1; j < answered.length; j++) {
      const a = answered[i]!;
      const b = answered[j]!;
      const sameEpoch = a.anchor.epoch === b.anchor.epoch && a.anchor.root !== b.anchor.root;
      const sameBlock = a.anchor.execution && b.anchor.execution && a.anchor.execution.number === b.anchor.execution.number && a.anchor.execution.hash !== b.anchor.execution.hash;
      const sameRoot = a.anchor.root === b.anchor.root && (a.anchor.execution?.hash ?? null) !== (b.anchor.execution?.hash ?? null);
      if (sameEpoch || sameBlock || sameRoot) conflicts.push(`${a.endpoint} reports ${describe(a.anchor)} but ${b.endpoint} reports ${describe(b.anchor)}`);
    }
  }
  if (conflicts.length > 0) return { kind: 'disagreement', reason: `beacon endpoints disagree on the finalized checkpoint: ${conflicts.join('; ')}` };
  const failed = reports.filter((r): r is Extract<AnchorReport, { error: string }> => 'error' in r);
  const failures = failed.map((r) => `${r.endpoint}: ${r.error}`).join('; ');
  if (answered.length < minimum) {
    return { kind: 'insufficient', reason: `${answered.length} of ${reports.length} beacon endpoints answered, ${minimum} must agree${failures ? ` (${failures})` : ''}` };
  }
  const groups = new Map<string, { anchor: FinalizedAnchor; endpoints: string[] }>();
  for (const report of answered) {
    const key = `${report.anchor.root}|${report.anchor.execution?.hash ?? ''}`;
    const group = groups.get(key) ?? { anchor: report.anchor, endpoints: [] };
    group.endpoints.push(report.endpoint);
    groups.set(key, group);
  }
  const supported = [...groups.values()].filter((g) => g.endpoints.length >= minimum).sort((x, y) => y.anchor.epoch - x.anchor.epoch);
  const best = supported[0];
  if (!best) return { kind: 'insufficient', reason: `no finalized checkpoint is reported by ${minimum} endpoints yet (${answered.map((r) => `${r.endpoint}: ${describe(r.anchor)}`).join('; ')})` };
  const execution = best.anchor.execution;
  if (!execution) return { kind: 'insufficient', reason: `the agreed finalized checkpoint ${describe(best.anchor)} has no execution payload yet` };
  return { kind: 'agreed', anchor: { ...best.anchor, execution }, endpoints: best.endpoints };
}
