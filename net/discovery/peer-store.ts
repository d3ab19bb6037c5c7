/**
 * The disposable peer store: node addresses the node learned (from DNS trees, discovery, qualified sessions), kept
 * across restarts in one JSON file and capped at `maxEntries` (the least recently seen go first). On start its
 * entries are dial candidates of origin `cached_hot` (qualified within the last day) or `cached_broad` (the rest).
 * Losing the file loses nothing but a faster start; a corrupt file is set aside and the store starts empty.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface PeerRecord {
  /** 64-byte node id (public key), hex without 0x. */
  readonly id: string;
  readonly host: string;
  readonly tcpPort: number;
  readonly udpPort: number;
  readonly lastSeenAt: number;
  /** When a session with it last passed qualification; null when never. */
  readonly lastQualifiedAt: number | null;
}

const FORMAT = 1;
export const HOT_WINDOW_MS = 24 * 60 * 60 * 1000;

export class PeerStore {
  private readonly entries = new Map<string, PeerRecord>();
  private dirty = false;

  constructor(private readonly path: string, private readonly maxEntries: number, private readonly now: () => number = Date.now) {
    this.load();
  }

  get size(): number {
    return this.entries.size;
  }

  records(): PeerRecord[] {
    return [...this.entries.values()].sort((a, b) => b.lastSeenAt - a.lastSeenAt);
  }

  isHot(record: PeerRecord): boolean {
    return record.lastQualifiedAt !== null && this.now() - record.lastQualifiedAt < HOT_WINDOW_MS;
  }

  /** Records (or refreshes) an address; `qualified` marks a session with it that passed qualification. */
  note(peer: { id: string; host: string; tcpPort: number; udpPort: number }, qualified = false): void {
    const previous = this.entries.get(peer.id);
    const now = this.now();
    this.entries.delete(peer.id);
    this.entries.set(peer.id, { ...peer, lastSeenAt: now, lastQualifiedAt: qualified ? now : previous?.lastQualifiedAt ?? null });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.records().at(-1)!;
      this.entries.delete(oldest.id);
    }
    this.dirty = true;
  }

  forget(id: string): void {
    this.dirty = this.entries.delete(id) || this.dirty;
  }

  /** Writes the file when something changed (atomically: a temporary file renamed over it). */
  save(): void {
    if (!this.dirty) return;
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ format: FORMAT, peers: this.records() }), { mode: 0o600 });
    renameSync(temporary, this.path);
    this.dirty = false;
  }

  private load(): void {
    if (!existsSync(this.path)) return;
    try {
      const parsed = JSON.parse(readFileSync(this.path, 'utf8')) as { format?: unknown; peers?: unknown };
      if (parsed.format !== FORMAT || !Array.isArray(parsed.peers)) throw new Error('unknown format');
      for (const peer of parsed.peers.slice(0, this.maxEntries) as PeerRecord[]) {
        if (typeof peer.id !== 'string' || !/^[0-9a-f]{128}$/.test(peer.id) || typeof peer.host !== 'string' || !Number.isInteger(peer.tcpPort) || !Number.isInteger(peer.udpPort)) continue;
        this.entries.set(peer.id, { id: peer.id, host: peer.host, tcpPort: peer.tcpPort, udpPort: peer.udpPort, lastSeenAt: Number(peer.lastSeenAt) || 0, lastQualifiedAt: typeof peer.lastQualifiedAt === 'number' ? peer.lastQualifiedAt : null });
      }
    } catch {
      renameSync(this.path, `${this.path}.corrupt`);
      this.entries.clear();
    }
  }
}
