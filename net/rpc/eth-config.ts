/**
 * An upstream's `eth_config` answer (EIP-7910) as a fork schedule. EIP-7910 describes only the fork
 * in force (`current`) and the scheduled `next` and `last` ones, each with its activation time,
 * blob schedule, chain id, fork id, precompiles and system contracts — not fork names and not the
 * forks before `current`. So:
 *
 * - a fork's name comes from what it adds: P256VERIFY → Osaka, the BLS12-381 precompiles → Prague,
 *   KZG_POINT_EVALUATION → Cancun; a later entry with Osaka's precompiles and new blob parameters is
 *   the next BPO fork (bpo1, bpo2, …);
 * - the schedule is complete only when `current` has been active since genesis (activation time at
 *   or before the genesis timestamp, as on a dev chain such as anvil): then every earlier fork is
 *   active from genesis too. Otherwise the forks between genesis and `current` are unknown and the
 *   answer cannot stand alone (`scheduleFromEthConfig` returns the reason).
 */
import { createForkSchedule, FORK_NAMES, type ForkActivation, type ForkName, type ForkSchedule } from '../eth/fork-schedule.js';
import { forkId } from '../eth/fork-id.js';
import type { Hex } from '../eth/hex.js';

export interface EthConfigFork {
  readonly activationTime: number;
  readonly blobSchedule: { readonly target: number; readonly max: number; readonly baseFeeUpdateFraction: bigint } | null;
  readonly chainId: bigint;
  readonly forkId: Hex;
  readonly precompiles: ReadonlySet<string>;
}

export interface EthConfig {
  readonly current: EthConfigFork;
  readonly next: EthConfigFork | null;
  readonly last: EthConfigFork | null;
}

export class EthConfigFormatError extends Error {
  override readonly name = 'EthConfigFormatError';
}

function integer(value: unknown, what: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string' && /^0x[0-9a-f]+$/i.test(value)) return BigInt(value);
  throw new EthConfigFormatError(`${what} is not a non-negative integer or 0x quantity: ${JSON.stringify(value)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseFork(value: unknown, field: string): EthConfigFork {
  if (!isObject(value)) throw new EthConfigFormatError(`${field} is not an object`);
  const blob = value.blobSchedule;
  if (blob !== null && blob !== undefined && !isObject(blob)) throw new EthConfigFormatError(`${field}.blobSchedule is not an object`);
  const precompiles = value.precompiles;
  if (!isObject(precompiles)) throw new EthConfigFormatError(`${field}.precompiles is not an object`);
  const id = value.forkId;
  if (typeof id !== 'string' || !/^0x[0-9a-f]{8}$/i.test(id)) throw new EthConfigFormatError(`${field}.forkId is not 4 bytes of hex`);
  return {
    activationTime: Number(integer(value.activationTime, `${field}.activationTime`)),
    blobSchedule: isObject(blob) ? {
      target: Number(integer(blob.target, `${field}.blobSchedule.target`)),
      max: Number(integer(blob.max, `${field}.blobSchedule.max`)),
      baseFeeUpdateFraction: integer(blob.baseFeeUpdateFraction, `${field}.blobSchedule.baseFeeUpdateFraction`),
    } : null,
    chainId: integer(value.chainId, `${field}.chainId`),
    forkId: id.toLowerCase() as Hex,
    precompiles: new Set(Object.keys(precompiles)),
  };
}

/** Validates an `eth_config` result once, at the edge. */
export function parseEthConfig(result: unknown): EthConfig {
  if (!isObject(result)) throw new EthConfigFormatError('the result is not an object');
  return {
    current: parseFork(result.current, 'current'),
    next: result.next === null || result.next === undefined ? null : parseFork(result.next, 'next'),
    last: result.last === null || result.last === undefined ? null : parseFork(result.last, 'last'),
  };
}

/** The fork an entry describes, from the precompiles it adds (see the module comment). */
function baseForkOf(fork: EthConfigFork): ForkName | null {
  if (fork.precompiles.has('P256VERIFY')) return 'osaka';
  if (fork.precompiles.has('BLS12_G1ADD')) return 'prague';
  if (fork.precompiles.has('KZG_POINT_EVALUATION')) return 'cancun';
  return null;
}

const sameBlob = (a: EthConfigFork['blobSchedule'], b: EthConfigFork['blobSchedule']) =>
  a !== null && b !== null && a.target === b.target && a.max === b.max && a.baseFeeUpdateFraction === b.baseFeeUpdateFraction;

export type EthConfigSchedule = { readonly ok: true; readonly schedule: ForkSchedule } | { readonly ok: false; readonly reason: string };

/**
 * The whole fork schedule, when the answer determines it; checked against the upstream's own fork
 * ids (an upstream that reports 0x00000000, as anvil 1.7 does, is not checked).
 */
export function scheduleFromEthConfig(config: EthConfig, genesis: { hash: Hex; timestamp: number }): EthConfigSchedule {
  const entries = [config.current, config.next, config.last].filter((f): f is EthConfigFork => f !== null)
    .filter((fork, index, all) => all.findIndex((other) => other.activationTime === fork.activationTime) === index);
  if (config.current.activationTime > genesis.timestamp) {
    return { ok: false, reason: `eth_config's current fork activated at ${config.current.activationTime}, after genesis (${genesis.timestamp}); the forks before it are not described` };
  }
  const forks: ForkActivation[] = [];
  let lastBase: ForkName | null = null;
  let previous: EthConfigFork | null = null;
  let bpo = 0;
  for (const entry of entries) {
    const base = baseForkOf(entry);
    if (base === null) return { ok: false, reason: `an eth_config entry (activation ${entry.activationTime}) has no Cancun precompile; only Cancun and later are described` };
    let name: ForkName = base;
    if (base === 'osaka' && lastBase === 'osaka') {
      if (previous !== null && sameBlob(previous.blobSchedule, entry.blobSchedule)) return { ok: false, reason: `two eth_config entries (${previous.activationTime}, ${entry.activationTime}) describe the same fork` };
      bpo += 1;
      if (bpo > 5) return { ok: false, reason: 'more BPO forks than this node knows' };
      name = `bpo${bpo}` as ForkName;
    } else if (lastBase !== null && FORK_NAMES.indexOf(base) <= FORK_NAMES.indexOf(lastBase)) {
      return { ok: false, reason: `eth_config entries are out of fork order (${base} after ${lastBase})` };
    }
    if (entry.blobSchedule === null) return { ok: false, reason: `the ${name} entry has no blob schedule` };
    forks.push({ name, timestamp: entry.activationTime, inForkId: true, blob: { ...entry.blobSchedule } });
    lastBase = base;
    previous = entry;
  }
  // Everything before the first described fork has been active since genesis.
  const first = FORK_NAMES.indexOf(forks[0]!.name);
  const earlier: ForkActivation[] = [];
  for (const name of FORK_NAMES.slice(1, first)) {
    if (name === 'dao') continue;
    if (FORK_NAMES.indexOf(name) >= FORK_NAMES.indexOf('shanghai')) {
      earlier.push({ name, timestamp: 0, inForkId: true, ...(name === 'cancun' ? { blob: { target: 3, max: 6, baseFeeUpdateFraction: 3_338_477n } } : name === 'prague' ? { blob: { target: 6, max: 9, baseFeeUpdateFraction: 5_007_716n } } : {}) });
    } else {
      earlier.push({ name, block: 0, inForkId: name !== 'paris' });
    }
  }
  const schedule = createForkSchedule(config.current.chainId, [...earlier, ...forks]);
  for (const entry of entries) {
    if (entry.forkId === '0x00000000') continue;
    const expected = forkId(schedule, genesis, { number: Number.MAX_SAFE_INTEGER, timestamp: entry.activationTime }).hash;
    if (expected !== entry.forkId) return { ok: false, reason: `the fork id the upstream reports for activation ${entry.activationTime} (${entry.forkId}) is not the one the described forks give (${expected}): forks the answer does not describe (eth_config names only the current, next and last ones) activate before it` };
  }
  return { ok: true, schedule };
}

/** Differences between an eth_config answer and a schedule from elsewhere (a genesis file), for the described forks. */
export function ethConfigMismatches(config: EthConfig, schedule: ForkSchedule): string[] {
  const problems: string[] = [];
  if (config.current.chainId !== schedule.chainId) problems.push(`chain id ${config.current.chainId} vs ${schedule.chainId}`);
  for (const [field, entry] of [['current', config.current], ['next', config.next], ['last', config.last]] as const) {
    if (entry === null) continue;
    const at = entry.activationTime;
    // The blob fork in force at the entry's activation time, by the other schedule.
    const fork = [...schedule.forks].reverse().find((f) => f.blob !== undefined && f.timestamp !== undefined && f.timestamp <= at);
    if (!fork) {
      problems.push(`eth_config ${field} activates at ${at}, where the genesis file schedules no blob fork`);
      continue;
    }
    const blob = fork.blob!;
    if (entry.blobSchedule && (blob.target !== entry.blobSchedule.target || blob.max !== entry.blobSchedule.max || blob.baseFeeUpdateFraction !== entry.blobSchedule.baseFeeUpdateFraction)) {
      problems.push(`${fork.name} blob schedule: eth_config ${field} says target ${entry.blobSchedule.target}, max ${entry.blobSchedule.max}, fraction ${entry.blobSchedule.baseFeeUpdateFraction}; the genesis file says target ${blob.target}, max ${blob.max}, fraction ${blob.baseFeeUpdateFraction}`);
    }
    const base = baseForkOf(entry);
    if (base !== null && FORK_NAMES.indexOf(fork.name) < FORK_NAMES.indexOf(base)) problems.push(`eth_config ${field} (activation ${at}) has ${base}'s precompiles; the genesis file schedules ${fork.name} there`);
  }
  return problems;
}
