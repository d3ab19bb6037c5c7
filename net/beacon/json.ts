/**
 * Beacon API JSON (`{version, data}` envelopes of the light-client routes, snake_case fields,
 * decimal strings, 0x-hex bytes) → the light-client objects of ./types.ts. Every field is checked
 * here, once; a bad one raises LightClientError('malformed') naming it.
 */
import { hexToBytes } from '../eth/hex.js';
import type { BeaconChainConfig } from './config.js';
import { LightClientError } from './errors.js';
import { isZero } from './merkle.js';
import { BeaconBlockHeader, DenebExecutionPayloadHeader, syncCommitteeType, type SyncCommitteeValue } from './ssz.js';
import type { LightClientBootstrap, LightClientFinalityUpdate, LightClientHeader, LightClientOptimisticUpdate, LightClientUpdate, SyncAggregate } from './types.js';

type Json = Record<string, unknown>;

function object(value: unknown, path: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LightClientError('malformed', `${path}: expected an object`);
  return value as Json;
}

function field(json: Json, key: string, path: string): unknown {
  if (!Object.hasOwn(json, key)) throw new LightClientError('malformed', `${path}.${key}: missing`);
  return json[key];
}

function bytes(value: unknown, length: number, path: string): Uint8Array {
  if (typeof value !== 'string') throw new LightClientError('malformed', `${path}: expected 0x-hex of ${length} bytes`);
  try {
    return hexToBytes(value, length);
  } catch (error) {
    throw new LightClientError('malformed', `${path}: ${(error as Error).message}`);
  }
}

function branch(value: unknown, path: string): Uint8Array[] {
  if (!Array.isArray(value) || value.length > 64) throw new LightClientError('malformed', `${path}: expected an array of 32-byte hashes`);
  return value.map((node, i) => bytes(node, 32, `${path}[${i}]`));
}

function slot(value: unknown, path: string): number {
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new LightClientError('malformed', `${path}: expected a decimal string`);
  return Number(value);
}

function ssz<T>(parse: () => T, path: string): T {
  try {
    return parse();
  } catch (error) {
    throw new LightClientError('malformed', `${path}: ${(error as Error).message}`);
  }
}

/** The `data` of a `{version, data}` envelope (or the object itself when it has no envelope). */
export function unwrapVersioned(json: unknown, path = 'response'): Json {
  const outer = object(json, path);
  return Object.hasOwn(outer, 'data') ? object(outer.data, `${path}.data`) : outer;
}

export function parseHeader(json: unknown, path: string): LightClientHeader {
  const header = object(json, path);
  const beacon = ssz(() => BeaconBlockHeader.fromJson(field(header, 'beacon', path)), `${path}.beacon`);
  if (!Object.hasOwn(header, 'execution')) return { beacon, execution: null, executionBranch: [] };
  const raw = object(header.execution, `${path}.execution`);
  // Capella-shaped JSON has no blob gas fields: the Deneb shape holds them as zero (the spec's own upgrade).
  const withBlobFields = { blob_gas_used: '0', excess_blob_gas: '0', ...raw };
  const execution = ssz(() => DenebExecutionPayloadHeader.fromJson(withBlobFields), `${path}.execution`);
  return { beacon, execution, executionBranch: branch(field(header, 'execution_branch', path), `${path}.execution_branch`) };
}

function syncCommittee(config: BeaconChainConfig, json: unknown, path: string): SyncCommitteeValue {
  return ssz(() => syncCommitteeType(config.syncCommitteeSize).fromJson(json), path);
}

function syncAggregate(config: BeaconChainConfig, json: unknown, path: string): SyncAggregate {
  const aggregate = object(json, path);
  const raw = bytes(field(aggregate, 'sync_committee_bits', path), config.syncCommitteeSize / 8, `${path}.sync_committee_bits`);
  const bits = Array.from({ length: config.syncCommitteeSize }, (_, i) => ((raw[i >> 3]! >> (i & 7)) & 1) === 1);
  return { bits, signature: bytes(field(aggregate, 'sync_committee_signature', path), 96, `${path}.sync_committee_signature`) };
}

const isDefaultHeader = (header: LightClientHeader): boolean =>
  header.beacon.slot === 0 && header.beacon.proposerIndex === 0 && isZero(header.beacon.parentRoot) && isZero(header.beacon.stateRoot) && isZero(header.beacon.bodyRoot);

export function parseBootstrap(config: BeaconChainConfig, json: unknown): LightClientBootstrap {
  const data = unwrapVersioned(json, 'bootstrap');
  return {
    header: parseHeader(field(data, 'header', 'bootstrap'), 'bootstrap.header'),
    currentSyncCommittee: syncCommittee(config, field(data, 'current_sync_committee', 'bootstrap'), 'bootstrap.current_sync_committee'),
    currentSyncCommitteeBranch: branch(field(data, 'current_sync_committee_branch', 'bootstrap'), 'bootstrap.current_sync_committee_branch'),
  };
}

export function parseUpdate(config: BeaconChainConfig, json: unknown, path = 'update'): LightClientUpdate {
  const data = unwrapVersioned(json, path);
  const nextBranch = branch(field(data, 'next_sync_committee_branch', path), `${path}.next_sync_committee_branch`);
  const next = syncCommittee(config, field(data, 'next_sync_committee', path), `${path}.next_sync_committee`);
  const finalityBranch = branch(field(data, 'finality_branch', path), `${path}.finality_branch`);
  const finalized = parseHeader(field(data, 'finalized_header', path), `${path}.finalized_header`);
  const hasNext = nextBranch.some((node) => !isZero(node));
  const hasFinality = finalityBranch.some((node) => !isZero(node));
  // Without its branch, a part must be the SSZ default (validate_light_client_update asserts it).
  if (!hasNext && !(isZero(next.aggregatePubkey) && next.pubkeys.every(isZero))) throw new LightClientError('invalid_next_committee_branch', `${path}: a next sync committee without a branch`);
  if (!hasFinality && !isDefaultHeader(finalized)) throw new LightClientError('invalid_finality_branch', `${path}: a finalized header without a finality branch`);
  return {
    attestedHeader: parseHeader(field(data, 'attested_header', path), `${path}.attested_header`),
    nextSyncCommittee: hasNext ? next : null,
    nextSyncCommitteeBranch: nextBranch,
    finalizedHeader: hasFinality ? finalized : null,
    finalityBranch,
    syncAggregate: syncAggregate(config, field(data, 'sync_aggregate', path), `${path}.sync_aggregate`),
    signatureSlot: slot(field(data, 'signature_slot', path), `${path}.signature_slot`),
  };
}

export function parseFinalityUpdate(config: BeaconChainConfig, json: unknown, path = 'finality_update'): LightClientFinalityUpdate {
  const data = unwrapVersioned(json, path);
  return {
    attestedHeader: parseHeader(field(data, 'attested_header', path), `${path}.attested_header`),
    finalizedHeader: parseHeader(field(data, 'finalized_header', path), `${path}.finalized_header`),
    finalityBranch: branch(field(data, 'finality_branch', path), `${path}.finality_branch`),
    syncAggregate: syncAggregate(config, field(data, 'sync_aggregate', path), `${path}.sync_aggregate`),
    signatureSlot: slot(field(data, 'signature_slot', path), `${path}.signature_slot`),
  };
}

export function parseOptimisticUpdate(config: BeaconChainConfig, json: unknown, path = 'optimistic_update'): LightClientOptimisticUpdate {
  const data = unwrapVersioned(json, path);
  return {
    attestedHeader: parseHeader(field(data, 'attested_header', path), `${path}.attested_header`),
    syncAggregate: syncAggregate(config, field(data, 'sync_aggregate', path), `${path}.sync_aggregate`),
    signatureSlot: slot(field(data, 'signature_slot', path), `${path}.signature_slot`),
  };
}
