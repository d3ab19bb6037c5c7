/**
 * The shape of the devp2p part of the network status snapshot (spec §2.10): supervisor, managers, material requests
 * by outcome, sessions by establishment and disconnect reason, admissions/sessions/qualifications by origin. No peer
 * identity appears anywhere in it.
 */
import type { NatStatus } from './nat/port-mapper.js';

export type SupervisorState = 'running' | 'backing_off' | 'stopped';

export const PEER_ORIGINS = ['cached_hot', 'cached_broad', 'dns_tree', 'trusted', 'discv4_or_5'] as const;
export type PeerOrigin = (typeof PEER_ORIGINS)[number];

export interface SupervisorSnapshot {
  readonly state: SupervisorState;
  /** At most 200 characters. */
  readonly lastError: string | null;
  readonly failures: number;
  /** Seconds until the next retry while backing off; null otherwise. */
  readonly retryInSeconds: number | null;
}

export interface ManagerRow {
  readonly id: number;
  readonly phase: 'connecting' | 'qualifying' | 'syncing' | 'following' | 'stopped';
  readonly active: boolean;
  readonly connectedPeers: number;
  readonly knownPeers: number;
  /** The block range of the newest material request; null before any. */
  readonly requestedRange: { readonly from: number; readonly to: number } | null;
  readonly attempts: number;
  /** Seconds since this row last changed. */
  readonly lastChangeSecondsAgo: number;
  readonly lastError: string | null;
}

export interface ByOrigin {
  readonly admissions: Readonly<Record<PeerOrigin, number>>;
  readonly sessions: Readonly<Record<PeerOrigin, number>>;
  readonly qualifications: Readonly<Record<PeerOrigin, { readonly qualified: number; readonly rejected: number }>>;
}

export interface P2pSnapshot {
  readonly supervisor: SupervisorSnapshot;
  readonly managers: readonly ManagerRow[];
  /** `lane:outcome` → count, e.g. `bodies:ok`, `headers:timeout`. */
  readonly requests: Readonly<Record<string, number>>;
  readonly waitingForPeerSlotsMs: number;
  readonly sessions: {
    readonly established: number;
    readonly active: number;
    readonly byVersion: Readonly<Record<string, number>>;
    /** Disconnect reason name → count. */
    readonly disconnects: Readonly<Record<string, number>>;
    readonly handshakeFailures: Readonly<Record<string, number>>;
  };
  readonly byOrigin: ByOrigin;
  readonly bans: { readonly total: number; readonly active: number };
  readonly bytesReceived: number;
  readonly messages: { readonly malformed: number; readonly oversized: number; readonly unknown: number };
  /** The highest block the qualified peers announced or served (the live session's observed head); null before any. */
  readonly observedHead: number | null;
  readonly localHead: number | null;
  /** `sources.live.nat`: the mode, the mapping state, the external address and mapped ports (no peer identities). */
  readonly nat: NatStatus;
}

export function emptyByOrigin<T>(value: () => T): Record<PeerOrigin, T> {
  const record = Object.create(null) as Record<PeerOrigin, T>;
  for (const origin of PEER_ORIGINS) record[origin] = value();
  return record;
}
