/**
 * The port mapper of the peer lane (`sources.live.nat` = upnp, pmp or any): finds the gateway, learns the external
 * IPv4 address, maps each of the lane's ports (RLPx TCP, discv4 UDP, discv5 UDP) for a lease and renews the
 * mappings at half of it, hands the external address and ports to discovery (`onAnnounce`), and removes the
 * mappings on a clean stop. A gateway that cannot be found or refuses never stops the lane: the attempt is retried
 * with bounded exponential backoff (2 s doubling to 5 min), logged, counted and shown (`status()`).
 */
import type { Logger } from '../../../runtime/log.js';
import { GatewayError, type MappingProtocol, type NatGateway } from './gateway.js';
import { mapsPorts, type NatMode } from './mode.js';
import { defaultGateway, PmpGateway } from './pmp.js';
import { discoverUpnpGateway, UPNP_CONFLICT_IN_MAPPING, UPNP_ONLY_PERMANENT_LEASES, UpnpGateway } from './upnp.js';

export type NatPurpose = 'rlpx' | 'discv4' | 'discv5';
export type NatState = 'off' | 'searching' | 'mapped' | 'failed';
export type NatStage = 'discover' | 'external_ip' | 'map' | 'renew' | 'unmap';

export interface NatPort {
  readonly purpose: NatPurpose;
  readonly protocol: MappingProtocol;
  readonly internalPort: number;
}

export interface NatMapping extends NatPort {
  readonly externalPort: number;
  readonly leaseSeconds: number;
}

/** What the node announces: the external IPv4 address and the external port of each purpose. */
export interface NatAnnouncement {
  readonly ip: string;
  readonly ports: Readonly<Partial<Record<NatPurpose, number>>>;
}

/** The `nat` object of the network status (no peer identities; the gateway is named by protocol only). */
export interface NatStatus {
  readonly mode: NatMode['kind'];
  readonly state: NatState;
  readonly gateway: 'upnp' | 'pmp' | null;
  readonly externalAddress: string | null;
  readonly mappings: readonly NatMapping[];
  readonly leaseSeconds: number | null;
  /** Consecutive failed attempts (0 once mapped) and every failure since start. */
  readonly failures: number;
  readonly failuresTotal: number;
  /** At most 200 characters. */
  readonly lastError: string | null;
  readonly retryInSeconds: number | null;
  readonly renewInSeconds: number | null;
}

export interface NatMetrics {
  readonly mapped: { set(value: number): void };
  readonly failures: { inc(labels: { stage: NatStage }): void };
  readonly renewals: { inc(): void };
}

export interface PortMapperOptions {
  readonly mode: Extract<NatMode, { kind: 'upnp' | 'pmp' | 'any' }>;
  readonly ports: readonly NatPort[];
  readonly leaseSeconds: number;
  readonly log: Logger;
  readonly metrics: NatMetrics;
  readonly onAnnounce: (announcement: NatAnnouncement) => void;
}

const RETRY_INITIAL_MS = 2000;
const RETRY_MAX_MS = 300_000;
const ERROR_CHARS = 200;
/** How long a clean stop waits for the gateway to remove the mappings. */
const UNMAP_TIMEOUT_MS = 3000;
/** How long one attempt (find, external address, every mapping) may take. */
const ATTEMPT_TIMEOUT_MS = 30_000;

class StageError extends Error {
  constructor(readonly stage: NatStage, cause: unknown) {
    super((cause as Error).message, { cause });
  }
}

const bounded = (text: string) => (text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS - 1)}…` : text);

/**
 * Finds the gateway the mode names: the first of UPnP and NAT-PMP to answer for `any`. `gatewayOf` names the
 * NAT-PMP gateway when the mode does not (the default route's; a parameter so a test can aim `any` at a stub).
 */
export async function findGateway(mode: PortMapperOptions['mode'], signal: AbortSignal, gatewayOf: () => string | null = defaultGateway): Promise<NatGateway> {
  const upnp = async () => (mode.kind === 'upnp' && mode.descriptionUrl !== null ? UpnpGateway.fromDescription(mode.descriptionUrl, signal) : discoverUpnpGateway(signal));
  const pmp = async () => {
    const address = (mode.kind === 'pmp' ? mode.gateway : null) ?? gatewayOf();
    if (address === null) throw new GatewayError('no IPv4 default gateway in /proc/net/route; name it as "pmp:<gateway IPv4>"');
    const gateway = await PmpGateway.at(address);
    await gateway.externalIp(signal);
    return gateway;
  };
  if (mode.kind === 'upnp') return upnp();
  if (mode.kind === 'pmp') return pmp();
  try {
    return await Promise.any([upnp(), pmp()]);
  } catch (error) {
    const reasons = (error as AggregateError).errors.map((e: Error) => e.message);
    throw new GatewayError(`neither UPnP nor NAT-PMP answered: UPnP: ${reasons[0]}; NAT-PMP: ${reasons[1]}`);
  }
}

export class PortMapper {
  private state: NatState = 'searching';
  private gateway: NatGateway | null = null;
  private mappings: NatMapping[] = [];
  private externalAddress: string | null = null;
  private failures = 0;
  private failuresTotal = 0;
  private lastError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private nextAt: number | null = null;
  private stopped = false;
  private readonly abort = new AbortController();
  private running: Promise<void> | null = null;
  private readonly firstSettled: Promise<void>;
  private settleFirst!: () => void;

  constructor(private readonly options: PortMapperOptions, private readonly find: typeof findGateway = findGateway) {
    this.firstSettled = new Promise((resolve) => { this.settleFirst = resolve; });
  }

  start(): void {
    this.options.metrics.mapped.set(0);
    this.schedule(0);
  }

  /** Resolves once the first attempt ended (mapped or failed). */
  firstAttempt(): Promise<void> {
    return this.firstSettled;
  }

  status(): NatStatus {
    const inSeconds = (at: number | null) => (at === null ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000)));
    const waiting = this.timer !== null ? this.nextAt : null;
    return {
      mode: this.options.mode.kind, state: this.state, gateway: this.gateway?.protocol ?? null, externalAddress: this.externalAddress,
      mappings: this.mappings.map((m) => ({ ...m })), leaseSeconds: this.options.leaseSeconds,
      failures: this.failures, failuresTotal: this.failuresTotal, lastError: this.lastError,
      retryInSeconds: this.state === 'failed' ? inSeconds(waiting) : null,
      renewInSeconds: this.state === 'mapped' ? inSeconds(waiting) : null,
    };
  }

  /** Stops renewing and removes the mappings (bounded by 3 s); the gateway may keep them until their lease ends otherwise. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort(new Error('the peer lane is stopping'));
    await this.running?.catch(() => undefined);
    const gateway = this.gateway;
    const mappings = this.mappings;
    this.mappings = [];
    this.state = 'off';
    this.options.metrics.mapped.set(0);
    if (!gateway || mappings.length === 0) return;
    const signal = AbortSignal.timeout(UNMAP_TIMEOUT_MS);
    const results = await Promise.allSettled(mappings.map((m) => gateway.deleteMapping(m.protocol, m.internalPort, m.externalPort, signal)));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    for (const _ of failed) this.options.metrics.failures.inc({ stage: 'unmap' });
    if (failed.length > 0) this.options.log.warn('NAT mappings not all removed; the gateway drops them when their lease ends', { failed: failed.length, reason: bounded((failed[0]!.reason as Error).message) });
    else this.options.log.info('NAT mappings removed', { gateway: gateway.protocol, mappings: mappings.length });
  }

  /** Forcibly stops without removing anything (the lane crashed). */
  abortNow(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort(new Error('the peer lane aborted'));
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.nextAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.attempt().finally(() => { this.running = null; });
    }, delayMs);
    // Retries and renewals do not hold the process open; the first attempt (delay 0) does, so whoever awaits
    // firstAttempt() is not left with a pending promise and an empty event loop.
    if (delayMs > 0) this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const renewing = this.state === 'mapped';
    if (!renewing) this.state = this.failures > 0 ? 'failed' : 'searching';
    const signal = AbortSignal.any([this.abort.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]);
    const mappings: NatMapping[] = [];
    try {
      const gateway = this.gateway ?? await this.stage('discover', () => this.find(this.options.mode, signal));
      this.gateway = gateway;
      const ip = await this.stage('external_ip', () => gateway.externalIp(signal));
      for (const port of this.options.ports) {
        const previous = this.mappings.find((m) => m.purpose === port.purpose);
        mappings.push(await this.stage(renewing ? 'renew' : 'map', () => this.mapPort(gateway, port, previous?.externalPort ?? port.internalPort, signal)));
      }
      if (this.stopped) {
        this.mappings = mappings;
        return;
      }
      const changed = ip !== this.externalAddress || mappings.some((m) => this.mappings.find((p) => p.purpose === m.purpose)?.externalPort !== m.externalPort);
      this.mappings = mappings;
      this.externalAddress = ip;
      this.state = 'mapped';
      this.failures = 0;
      this.options.metrics.mapped.set(1);
      if (renewing) this.options.metrics.renewals.inc();
      if (changed) {
        this.options.log.info('NAT mapping in place', { gateway: gateway.protocol, externalAddress: ip, mappings: mappings.map((m) => `${m.protocol}/${m.internalPort}→${m.externalPort}`).join(' '), leaseSeconds: this.options.leaseSeconds });
        this.options.onAnnounce({ ip, ports: Object.fromEntries(mappings.map((m) => [m.purpose, m.externalPort])) });
      }
      const lease = Math.min(...mappings.map((m) => (m.leaseSeconds > 0 ? m.leaseSeconds : this.options.leaseSeconds)), this.options.leaseSeconds);
      this.schedule(Math.max(1000, (lease * 1000) / 2));
    } catch (error) {
      // Whatever was mapped before the failure stays known, so a clean stop removes it.
      for (const mapping of mappings) this.mappings = [...this.mappings.filter((m) => m.purpose !== mapping.purpose), mapping];
      if (this.stopped) return;
      const stage = error instanceof StageError ? error.stage : 'map';
      this.failures++;
      this.failuresTotal++;
      this.lastError = bounded(`${stage}: ${(error as Error).message}`);
      this.state = 'failed';
      this.options.metrics.mapped.set(0);
      this.options.metrics.failures.inc({ stage });
      // The next attempt looks for the gateway again: it may have restarted on another address.
      if (stage === 'discover' || !(error instanceof StageError && error.cause instanceof GatewayError)) this.gateway = null;
      const delay = Math.min(RETRY_MAX_MS, RETRY_INITIAL_MS * 2 ** Math.min(this.failures - 1, 20));
      if (this.failures === 1 || this.failures % 10 === 0) this.options.log.warn('NAT port mapping failed; retrying', { mode: this.options.mode.kind, stage, reason: this.lastError, retryInSeconds: Math.ceil(delay / 1000), failures: this.failures });
      this.schedule(delay);
    } finally {
      this.settleFirst();
    }
  }

  private async stage<T>(stage: NatStage, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw new StageError(stage, error);
    }
  }

  /**
   * Maps one port, asking for `externalPort` (the internal port, or the one mapped before); a UPnP gateway that
   * says the port is taken is asked for another (random, above 1024, at most three times), one that grants only
   * permanent leases is asked for a permanent one (renewed all the same).
   */
  private async mapPort(gateway: NatGateway, port: NatPort, externalPort: number, signal: AbortSignal): Promise<NatMapping> {
    let lease = this.options.leaseSeconds;
    let external = externalPort;
    for (let tries = 0; ; tries++) {
      try {
        const granted = await gateway.addMapping(port.protocol, port.internalPort, external, lease, signal);
        return { ...port, externalPort: granted.externalPort, leaseSeconds: granted.leaseSeconds };
      } catch (error) {
        const code = error instanceof GatewayError ? error.code : null;
        if (tries >= 3 || gateway.protocol !== 'upnp') throw error;
        if (code === UPNP_ONLY_PERMANENT_LEASES && lease !== 0) lease = 0;
        else if (code === UPNP_CONFLICT_IN_MAPPING) external = 1025 + Math.floor(Math.random() * (65535 - 1025));
        else throw error;
      }
    }
  }
}

export function isMappingMode(mode: NatMode): mode is PortMapperOptions['mode'] {
  return mapsPorts(mode);
}
