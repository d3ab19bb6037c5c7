/**
 * The network manager of the peer lane: one RLPx host (eth/69 + eth/68), the trusted peers and the peers of the
 * configured EIP-1459 DNS trees (roots re-resolved every 15 s), of discv4 and discv5 (origin `discv4_or_5`) and of the peer
 * store (kept across restarts) it dials and re-dials
 * with bounded exponential backoff, the qualification of every new session against the verified execution anchor
 * (the peer must serve the anchor's header with the right hash), and the supervisor state the status snapshot shows
 * (`running`, `backing_off`, `stopped`). Zero sessions for `recoveryMs` rebuilds the whole host; the replaced
 * manager is kept as a stopped record (at most 32).
 */
import { fetchHeaderByHash, InvalidMaterial } from '../../net/p2p/acquire.js';
import type { BlockRef } from '../../store/chain-types.js';
import { parseEnode, type Enode } from '../../net/p2p/enode.js';
import { EthHost } from '../../net/p2p/host.js';
import { PeerPool } from '../../net/p2p/peer-pool.js';
import { localStatus, refuseStatus, type ChainIdentity, type LocalHead } from '../../net/p2p/status.js';
import { emptyByOrigin, type ManagerRow, type P2pSnapshot, type PeerOrigin, type SupervisorState } from '../../net/p2p/network-snapshot.js';
import { syncDnsTree, type TxtResolver } from '../../net/discovery/dns-tree.js';
import type { PeerStore } from '../../net/discovery/peer-store.js';
import { startDiscv5, type Discv5Service } from '../../net/discovery/discv5.js';
import { startDiscv4, type Discv4Service } from '../../net/discovery/discv4.js';
import { nodeIdOf } from '../../net/p2p/enode.js';
import { freeUdpPort } from '../../net/discovery/udp-port.js';
import type { EthRequestHandler, EthSession } from '../../net/p2p/session.js';
import type { Logger } from '../../runtime/log.js';
import type { P2pMetrics } from './metrics.js';
import type { NatMode } from '../../net/p2p/nat/mode.js';
import { isMappingMode, PortMapper, type NatAnnouncement, type NatPort, type NatStatus } from '../../net/p2p/nat/port-mapper.js';

export const STOPPED_RECORDS_KEPT = 32;
const PEER_STORE_SAVE_MS = 30_000;
/** discv4 table refresh (FINDNODE toward random targets), and the bootnodes pinged again while the table is empty. */
const DISCV4_REFRESH_MS = 30_000;
/** How long discovery waits for the first NAT mapping attempt before it starts announcing the local address. */
const NAT_FIRST_ATTEMPT_WAIT_MS = 10_000;

function storeEntry(enode: Enode): { id: string; host: string; tcpPort: number; udpPort: number } {
  return { id: Buffer.from(enode.id).toString('hex'), host: enode.host, tcpPort: enode.tcpPort, udpPort: enode.udpPort };
}
const ERROR_CHARS = 200;

export interface NetworkOptions {
  readonly privateKey: Uint8Array;
  readonly chain: ChainIdentity;
  readonly trustedPeers: readonly string[];
  /** EIP-1459 tree URLs; their roots are re-resolved every `dnsIntervalMs` (15 s by the spec). */
  readonly dnsTrees: readonly string[];
  readonly resolveTxt: TxtResolver;
  readonly dnsIntervalMs: number;
  /** Cap of the in-memory candidate set (discovered peers). */
  readonly maxCandidates: number;
  /** Addresses kept across restarts; null: none kept. */
  readonly peerStore: PeerStore | null;
  /** discv5 on 127.0.0.1 (UDP port, 0: any free one) with these bootnodes; null: off. */
  readonly discv5: { readonly port: number; readonly bootnodes: readonly string[]; readonly announceIp?: string | null } | null;
  /** discv4 on 127.0.0.1 (UDP port) with these bootnode enode URLs; null or absent: off. */
  readonly discv4?: { readonly port: number; readonly bootnodes: readonly string[]; readonly announceIp?: string | null } | null;
  /**
   * `sources.live.nat`: with upnp, pmp or any the lane maps its ports at the gateway for `leaseSeconds` (renewed) and
   * discovery announces the external address and ports the gateway reports; absent: none.
   */
  readonly nat?: { readonly mode: NatMode; readonly leaseSeconds: number };
  readonly listenPort: number;
  readonly maxPeers: number;
  readonly concurrency: number;
  readonly windowBlocks: number;
  readonly banMs: number;
  readonly recoveryMs: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  readonly requestTimeoutMs: number;
  readonly localHead: () => LocalHead;
  /** Answers peers' requests from the node's verified chain (a good peer serves what it has). */
  readonly handler: EthRequestHandler | null;
  /** The verified execution anchor every new session is qualified against. */
  readonly anchor: () => BlockRef;
  readonly log: Logger;
  readonly metrics: P2pMetrics;
  /** Called when the set of qualified sessions or a peer's announced range changes. */
  readonly onChange: () => void;
}

interface Dial {
  readonly enode: Enode;
  readonly origin: PeerOrigin;
  /** Consecutive dials that did not end in a qualified session. */
  attempts: number;
  tried: boolean;
  nextAt: number;
}

interface Manager {
  readonly id: number;
  readonly host: EthHost;
  row: Omit<ManagerRow, 'lastChangeSecondsAgo' | 'connectedPeers' | 'knownPeers' | 'active'> & { changedAt: number };
}

const bounded = (text: string) => (text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS - 1)}…` : text);

function handshakeCause(reason: string): string {
  for (const cause of ['network id', 'genesis', 'fork id', 'timeout', 'status version']) if (reason.includes(cause)) return cause.replace(' ', '_');
  return 'other';
}

export class NetworkManager {
  readonly pool: PeerPool;
  private manager: Manager | null = null;
  private nextManagerId = 1;
  private readonly stoppedRecords: ManagerRow[] = [];
  private readonly dials: Dial[];
  private timer: NodeJS.Timeout | null = null;
  private dnsTimer: NodeJS.Timeout | null = null;
  private readonly treeRoots = new Map<string, string>();
  private syncingTrees = false;
  private savedAt = Date.now();
  private discv5: Discv5Service | null = null;
  private discv5Port = 0;
  private discv4: Discv4Service | null = null;
  private natMapper: PortMapper | null = null;
  /** What the NAT mapping announces (external address and ports); null before a mapping. */
  private natAnnounced: NatAnnouncement | null = null;
  /**
   * Where the lane's sockets listen: 127.0.0.1 with `nat = "none"`; every interface (0.0.0.0) when the node announces
   * an address others dial — a mapping mode, whose gateway forwards the mapped ports to this host's address on its
   * network, or `extip`, whose port forward does the same.
   */
  private readonly bindHost: string;
  private stopped = false;
  private failures = 0;
  private lastError: string | null = null;
  private zeroSince: number;
  private established = 0;
  private readonly byVersion = new Map<string, number>();
  private readonly disconnects = new Map<string, number>();
  private readonly handshakeFailures = new Map<string, number>();
  private readonly admissions = emptyByOrigin(() => 0);
  private readonly originSessions = emptyByOrigin(() => 0);
  private readonly qualifications = emptyByOrigin(() => ({ qualified: 0, rejected: 0 }));
  private readonly dropped = { malformed: 0, oversized: 0, unknown: 0 };
  private readonly closedSessions = new Set<EthSession>();

  constructor(private readonly options: NetworkOptions) {
    this.pool = new PeerPool({
      concurrency: options.concurrency, windowBlocks: options.windowBlocks, banMs: options.banMs,
      onRequest: (lane, outcome, bytes, purpose) => {
        options.metrics.requests.inc({ lane, outcome, purpose });
        if (bytes > 0) options.metrics.bytes.inc(bytes);
      },
      onBan: () => options.metrics.bans.inc(),
    });
    this.dials = options.trustedPeers.map((url) => ({ enode: parseEnode(url), origin: 'trusted' as const, attempts: 0, tried: false, nextAt: 0 }));
    for (const record of options.peerStore?.records() ?? []) {
      const id = Uint8Array.from(Buffer.from(record.id, 'hex'));
      if (this.dials.length >= options.maxCandidates || this.dials.some((d) => Buffer.from(d.enode.id).equals(Buffer.from(id)))) continue;
      const origin = options.peerStore!.isHot(record) ? 'cached_hot' as const : 'cached_broad' as const;
      this.dials.push({ enode: { id, host: record.host, tcpPort: record.tcpPort, udpPort: record.udpPort }, origin, attempts: 0, tried: false, nextAt: 0 });
    }
    this.zeroSince = Date.now();
    this.bindHost = options.nat && (isMappingMode(options.nat.mode) || options.nat.mode.kind === 'extip') ? '0.0.0.0' : '127.0.0.1';
  }

  start(): void {
    this.manager = this.createManager();
    this.timer = setInterval(() => this.tick(), 250);
    this.tick();
    void this.startDiscovery();
    if (this.options.dnsTrees.length > 0) {
      void this.syncTrees();
      this.dnsTimer = setInterval(() => void this.syncTrees(), this.options.dnsIntervalMs);
    }
  }

  /**
   * Stops the lane's network. `clean` (a normal stop) also removes the NAT mappings at the gateway (bounded);
   * otherwise (the actor aborted) they lapse when their lease ends.
   */
  async stop(clean = true): Promise<void> {
    this.stopNetwork();
    const mapper = this.natMapper;
    if (!mapper) return;
    if (clean) await mapper.stop();
    else mapper.abortNow();
  }

  private stopNetwork(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.dnsTimer) clearInterval(this.dnsTimer);
    void this.discv5?.stop().catch(() => undefined);
    this.discv4?.stop();
    this.savePeers();
    this.retire();
    this.setSupervisorGauge();
  }

  /** The highest block a qualified peer announced (status or BlockRangeUpdate); null when none did. */
  observedHead(): number | null {
    let best: number | null = null;
    for (const session of this.pool.sessions()) {
      const latest = session.range?.latest;
      if (latest !== undefined && (best === null || latest > best)) best = latest;
    }
    return best;
  }

  /** Notes the range of the newest material request (for the manager row). */
  noteRequest(from: number, to: number): void {
    if (!this.manager) return;
    this.manager.row = { ...this.manager.row, requestedRange: { from, to }, changedAt: Date.now() };
  }

  notePhase(phase: ManagerRow['phase'], error: string | null = null): void {
    if (!this.manager || (this.manager.row.phase === phase && error === null)) return;
    this.manager.row = { ...this.manager.row, phase, changedAt: Date.now(), ...(error !== null ? { lastError: bounded(error) } : {}) };
  }

  noteFailure(error: string): void {
    this.failures++;
    this.lastError = bounded(error);
    if (this.manager) this.manager.row = { ...this.manager.row, attempts: this.manager.row.attempts + 1, lastError: this.lastError, changedAt: Date.now() };
  }

  supervisorState(): SupervisorState {
    if (this.stopped) return 'stopped';
    if (this.pool.size > 0) return 'running';
    return this.dials.some((dial) => dial.attempts > 0) ? 'backing_off' : 'running';
  }

  snapshot(localHead: number | null): P2pSnapshot {
    const now = Date.now();
    const state = this.supervisorState();
    const nextAt = Math.min(...this.dials.filter((d) => d.attempts > 0).map((d) => d.nextAt));
    const managers: ManagerRow[] = [];
    if (this.manager) {
      const { changedAt, ...row } = this.manager.row;
      managers.push({ ...row, active: true, connectedPeers: this.pool.size, knownPeers: this.dials.length, lastChangeSecondsAgo: Math.round((now - changedAt) / 1000) });
    }
    managers.push(...this.stoppedRecords);
    for (const session of this.pool.sessions()) this.countMessages(session);
    return {
      supervisor: {
        state, lastError: this.lastError, failures: this.failures,
        retryInSeconds: state === 'backing_off' && Number.isFinite(nextAt) ? Math.max(0, Math.ceil((nextAt - now) / 1000)) : null,
      },
      managers,
      requests: Object.fromEntries(this.pool.counters.requests),
      waitingForPeerSlotsMs: this.pool.counters.waitingMs,
      sessions: {
        established: this.established, active: this.pool.size, byVersion: Object.fromEntries(this.byVersion),
        disconnects: Object.fromEntries(this.disconnects), handshakeFailures: Object.fromEntries(this.handshakeFailures),
      },
      byOrigin: { admissions: { ...this.admissions }, sessions: { ...this.originSessions }, qualifications: { ...this.qualifications } },
      bans: { total: this.pool.counters.bans, active: this.pool.bannedCount },
      bytesReceived: this.pool.counters.bytes,
      messages: { ...this.dropped },
      observedHead: this.observedHead(),
      localHead,
      nat: this.natStatus(),
    };
  }

  private createManager(): Manager {
    const host = new EthHost({
      privateKey: this.options.privateKey,
      status: () => localStatus(this.options.chain, this.options.localHead()),
      checkStatus: (remote) => refuseStatus(this.options.chain, this.options.localHead(), remote),
      handler: this.options.handler,
      maxPeers: this.options.maxPeers,
      handshakeTimeoutMs: this.options.requestTimeoutMs,
      listen: this.options.listenPort > 0 ? { host: this.bindHost, port: this.options.listenPort } : null,
    });
    host.on('error', (error) => this.noteFailure(`RLPx host: ${error.message}`));
    host.on('handshake:failed', (reason) => {
      const cause = handshakeCause(reason);
      this.handshakeFailures.set(cause, (this.handshakeFailures.get(cause) ?? 0) + 1);
      this.options.metrics.handshakeFailures.inc({ reason: cause });
      this.noteFailure(`status handshake refused: ${reason}`);
    });
    host.on('session', (session) => {
      this.established++;
      const version = `eth/${session.version}`;
      this.byVersion.set(version, (this.byVersion.get(version) ?? 0) + 1);
      this.options.metrics.sessionsEstablished.inc({ version });
      const origin = this.originOf(session);
      this.originSessions[origin]++;
      void this.qualify(session, origin);
    });
    host.on('session:closed', (session, reason) => {
      this.countMessages(session);
      this.pool.remove(session);
      this.disconnects.set(reason, (this.disconnects.get(reason) ?? 0) + 1);
      this.options.metrics.disconnects.inc({ reason });
      this.afterChange();
    });
    const id = this.nextManagerId++;
    this.options.log.info('network manager started', { manager: id, trustedPeers: this.dials.length, listenPort: this.options.listenPort || null });
    return { id, host, row: { id, phase: 'connecting', requestedRange: null, attempts: 0, lastError: null, changedAt: Date.now() } };
  }

  private originOf(session: EthSession): PeerOrigin {
    const id = session.peer.getId();
    const dial = id === null ? undefined : this.dials.find((d) => Buffer.from(d.enode.id).equals(Buffer.from(id)));
    return dial?.origin ?? 'discv4_or_5';
  }

  /** Re-resolves every tree root; walks a tree again only when its root changed; adds its nodes as candidates. */
  private async syncTrees(): Promise<void> {
    if (this.syncingTrees || this.stopped) return;
    this.syncingTrees = true;
    try {
      for (const url of this.options.dnsTrees) {
        try {
          const tree = await syncDnsTree(url, this.options.resolveTxt);
          if (this.treeRoots.get(url) === tree.root) continue;
          this.treeRoots.set(url, tree.root);
          let added = 0;
          for (const node of tree.nodes) {
            if (node.tcp === null || node.ip === null) continue;
            if (this.addCandidate({ id: node.publicKey, host: node.ip, tcpPort: node.tcp, udpPort: node.udp ?? node.tcp }, 'dns_tree')) added++;
          }
          this.options.log.info('DNS tree synced', { nodes: tree.nodes.length, added, skipped: tree.skipped, seq: tree.seq });
        } catch (error) {
          this.noteFailure(`DNS tree sync failed: ${(error as Error).message}`);
        }
      }
    } finally {
      this.syncingTrees = false;
    }
  }

  /**
   * Starts discv5 and discv4. With a NAT mapping mode the lane's ports (RLPx TCP, discv4 UDP, discv5 UDP — the port
   * actually bound when discv5_port is 0) are mapped first, and discovery waits for the first attempt (at most 10 s)
   * so its first pings and record carry the external address; a later mapping or a changed address is announced then.
   */
  private async startDiscovery(): Promise<void> {
    const discv5Port = this.options.discv5 ? (this.options.discv5.port > 0 ? this.options.discv5.port : await freeUdpPort(this.bindHost).catch(() => 0)) : 0;
    const nat = this.options.nat;
    if (nat && isMappingMode(nat.mode) && !this.stopped) {
      const ports: NatPort[] = [
        ...(this.options.listenPort > 0 ? [{ purpose: 'rlpx' as const, protocol: 'tcp' as const, internalPort: this.options.listenPort }] : []),
        ...(this.options.discv4 ? [{ purpose: 'discv4' as const, protocol: 'udp' as const, internalPort: this.options.discv4.port }] : []),
        ...(discv5Port > 0 ? [{ purpose: 'discv5' as const, protocol: 'udp' as const, internalPort: discv5Port }] : []),
      ];
      this.natMapper = new PortMapper({
        mode: nat.mode, ports, leaseSeconds: nat.leaseSeconds, log: this.options.log, metrics: this.options.metrics.nat,
        onAnnounce: (announcement) => this.announceNat(announcement),
      });
      this.natMapper.start();
      let waited: NodeJS.Timeout | undefined;
      await Promise.race([this.natMapper.firstAttempt(), new Promise<void>((resolve) => { waited = setTimeout(resolve, NAT_FIRST_ATTEMPT_WAIT_MS); waited.unref(); })]);
      clearTimeout(waited);
    }
    if (this.stopped) return;
    if (this.options.discv5) void this.startDiscv5({ ...this.options.discv5, port: discv5Port });
    if (this.options.discv4) void this.startDiscv4(this.options.discv4);
  }

  /** The address and ports discovery announces: the NAT mapping's, else `extip` (or 127.0.0.1) and the bound ports. */
  private announcement(purpose: 'discv4' | 'discv5', udpPort: number, announceIp: string | null | undefined): { ip: string; ports: { udp: number; tcp: number } } {
    const mapped = this.natAnnounced;
    if (!mapped) return { ip: announceIp ?? '127.0.0.1', ports: { udp: udpPort, tcp: this.options.listenPort } };
    return { ip: mapped.ip, ports: { udp: mapped.ports[purpose] ?? udpPort, tcp: mapped.ports.rlpx ?? this.options.listenPort } };
  }

  private announceNat(announcement: NatAnnouncement): void {
    this.natAnnounced = announcement;
    try {
      if (this.discv4 && this.options.discv4) {
        const { ip, ports } = this.announcement('discv4', this.options.discv4.port, null);
        this.discv4.announce(ip, ports.udp, ports.tcp);
      }
      if (this.discv5 && this.discv5Port > 0) {
        const { ip, ports } = this.announcement('discv5', this.discv5Port, null);
        this.discv5.announce(ip, ports.udp, ports.tcp);
      }
    } catch (error) {
      this.noteFailure(`announcing the NAT address: ${(error as Error).message}`);
    }
  }

  private natStatus(): NatStatus {
    if (this.natMapper) return this.natMapper.status();
    const mode = this.options.nat?.mode ?? { kind: 'none' as const };
    return {
      mode: mode.kind, state: 'off', gateway: null, externalAddress: mode.kind === 'extip' ? mode.ip : null, mappings: [], leaseSeconds: null,
      failures: 0, failuresTotal: 0, lastError: null, retryInSeconds: null, renewInSeconds: null,
    };
  }

  private async startDiscv5(config: { port: number; bootnodes: readonly string[]; announceIp?: string | null }): Promise<void> {
    try {
      const port = config.port > 0 ? config.port : await freeUdpPort(this.bindHost);
      this.discv5Port = port;
      const announced = this.announcement('discv5', port, config.announceIp);
      this.discv5 = await startDiscv5({
        privateKey: this.options.privateKey, host: this.bindHost, udpPort: port, tcpPort: this.options.listenPort, bootnodes: config.bootnodes,
        announceIp: announced.ip, announcePorts: announced.ports,
        lookupIntervalMs: 30_000, lookupTimeoutMs: 10_000,
        onNode: (node) => this.addCandidate({ id: node.publicKey, host: node.ip, tcpPort: node.tcp, udpPort: node.udp }, 'discv4_or_5'),
        onError: (error) => this.noteFailure(`discv5 lookup failed: ${error.message}`),
      });
      if (this.stopped) await this.discv5.stop();
      else this.options.log.info('discv5 started', { port });
      if (this.natAnnounced) this.announceNat(this.natAnnounced);
    } catch (error) {
      this.noteFailure(`discv5 did not start: ${(error as Error).message}`);
    }
  }

  private async startDiscv4(config: { port: number; bootnodes: readonly string[]; announceIp?: string | null }): Promise<void> {
    try {
      const announced = this.announcement('discv4', config.port, config.announceIp);
      const service = await startDiscv4({
        privateKey: this.options.privateKey, host: this.bindHost, udpPort: config.port, tcpPort: this.options.listenPort, announceIp: announced.ip, announcePorts: announced.ports,
        bootnodes: config.bootnodes.map((url) => parseEnode(url)), refreshIntervalMs: DISCV4_REFRESH_MS, timeoutMs: this.options.requestTimeoutMs,
        onNode: (node) => this.addCandidate({ id: node.publicKey, host: node.ip, tcpPort: node.tcp, udpPort: node.udp }, 'discv4_or_5'),
        onError: (error) => this.noteFailure(`discv4: ${error.message}`),
      });
      if (this.stopped) {
        service.stop();
        return;
      }
      this.discv4 = service;
      if (this.natAnnounced) this.announceNat(this.natAnnounced);
      this.options.log.info('discv4 started', { port: service.port, bootnodes: config.bootnodes.length });
    } catch (error) {
      this.noteFailure(`discv4 did not start: ${(error as Error).message}`);
    }
  }

  private addCandidate(enode: Enode, origin: PeerOrigin): boolean {
    if (this.dials.length >= this.options.maxCandidates || Buffer.from(enode.id).equals(Buffer.from(nodeIdOf(this.options.privateKey)))) return false;
    if (this.dials.some((d) => Buffer.from(d.enode.id).equals(Buffer.from(enode.id)))) return false;
    this.dials.push({ enode, origin, attempts: 0, tried: false, nextAt: 0 });
    this.options.peerStore?.note(storeEntry(enode));
    return true;
  }

  private async qualify(session: EthSession, origin: PeerOrigin): Promise<void> {
    const anchor = this.options.anchor();
    this.notePhase('qualifying');
    let outcome: 'qualified' | 'rejected' = 'rejected';
    try {
      if (session.range && session.range.earliest > anchor.number) throw new Error(`the peer serves blocks from ${session.range.earliest}, above the anchor ${anchor.number}`);
      const header = await fetchHeaderByHash(session, anchor.hash, this.options.requestTimeoutMs);
      if (!header) throw new Error(`the peer does not serve the anchor block ${anchor.number}`);
      outcome = 'qualified';
    } catch (error) {
      if (error instanceof InvalidMaterial) this.pool.ban(session);
      else if (!session.isClosed) session.disconnect();
      this.noteFailure(`qualification failed: ${(error as Error).message}`);
    }
    this.qualifications[origin][outcome]++;
    this.options.metrics.qualifications.inc({ outcome });
    if (outcome !== 'qualified' || session.isClosed || this.stopped) return;
    const dial = this.dials.find((d) => session.peer.getId() !== null && Buffer.from(d.enode.id).equals(Buffer.from(session.peer.getId()!)));
    if (dial) {
      dial.attempts = 0;
      dial.tried = false;
      if (dial.origin !== 'trusted') this.options.peerStore?.note(storeEntry(dial.enode), true);
    }
    session.onRange = () => this.options.onChange();
    this.pool.add(session);
    this.notePhase('following');
    this.afterChange();
  }

  private afterChange(): void {
    this.options.metrics.sessions.set(this.pool.size);
    if (this.pool.size > 0) this.zeroSince = Number.POSITIVE_INFINITY;
    else if (!Number.isFinite(this.zeroSince)) this.zeroSince = Date.now();
    this.setSupervisorGauge();
    this.options.onChange();
  }

  private setSupervisorGauge(): void {
    const state = this.supervisorState();
    for (const s of ['running', 'backing_off', 'stopped'] as const) this.options.metrics.supervisorState.set({ state: s }, s === state ? 1 : 0);
  }

  private countMessages(session: EthSession): void {
    if (this.closedSessions.has(session)) return;
    const c = session.counters;
    const seen = (session as unknown as { countedMessages?: { malformed: number; oversized: number; unknown: number } }).countedMessages ?? { malformed: 0, oversized: 0, unknown: 0 };
    for (const kind of ['malformed', 'oversized', 'unknown'] as const) {
      const delta = c[kind] - seen[kind];
      if (delta > 0) {
        this.dropped[kind] += delta;
        this.options.metrics.messages.inc({ kind }, delta);
      }
    }
    (session as unknown as { countedMessages: typeof c }).countedMessages = { ...c };
    if (session.isClosed) this.closedSessions.add(session);
  }

  private savePeers(): void {
    try {
      this.options.peerStore?.save();
    } catch (error) {
      this.options.log.warn('the peer store could not be written', { reason: (error as Error).message });
    }
  }

  private tick(): void {
    if (this.stopped || !this.manager) return;
    const now = Date.now();
    if (now - this.savedAt >= PEER_STORE_SAVE_MS) {
      this.savedAt = now;
      this.savePeers();
    }
    if (this.pool.size === 0 && now - this.zeroSince >= this.options.recoveryMs) {
      this.options.log.warn('no peers for the recovery timeout: rebuilding the network manager', { seconds: this.options.recoveryMs / 1000 });
      this.retire();
      this.manager = this.createManager();
      this.zeroSince = now;
      for (const dial of this.dials) dial.nextAt = 0;
    }
    const host = this.manager.host;
    for (const dial of this.dials) {
      if (host.sessionCount >= this.options.maxPeers) break;
      if (now < dial.nextAt || host.isConnected(dial.enode.id) || this.pool.isBanned(Buffer.from(dial.enode.id).toString('hex'))) continue;
      if (dial.tried) dial.attempts++;
      dial.tried = true;
      dial.nextAt = now + Math.min(this.options.backoffMaxMs, this.options.backoffInitialMs * 2 ** Math.min(dial.attempts, 20));
      this.admissions[dial.origin]++;
      host.dial(dial.enode).catch((error: Error) => {
        this.noteFailure(`dialling a ${dial.origin === 'trusted' ? 'trusted' : 'discovered'} peer failed: ${error.message}`);
        this.setSupervisorGauge();
      });
    }
    this.setSupervisorGauge();
  }

  private retire(): void {
    if (!this.manager) return;
    const { changedAt, ...row } = this.manager.row;
    this.manager.host.destroy();
    this.stoppedRecords.unshift({ ...row, phase: 'stopped', active: false, connectedPeers: 0, knownPeers: this.dials.length, lastChangeSecondsAgo: Math.round((Date.now() - changedAt) / 1000) });
    this.stoppedRecords.splice(STOPPED_RECORDS_KEPT);
    this.manager = null;
  }
}
