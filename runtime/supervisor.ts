/**
 * OTP-style supervision of one lane: child specs, the `one_for_one` strategy, restart intensity
 * within a period, bounded exponential backoff with jitter, and escalation when the intensity is
 * exceeded (the lane is marked `failed` and its children are no longer restarted).
 */

export type RestartType = 'permanent' | 'transient' | 'temporary';
export type LaneState = 'starting' | 'ready' | 'degraded' | 'restarting' | 'failed' | 'stopped';

export interface ChildSpec {
  /** Actor name, unique in the system (a lane with several instances names them `lane#1`, `lane#2`, …). */
  readonly name: string;
  /** Absolute path or file URL of the compiled actor module (its default export is an ActorDefinition). */
  readonly module: string;
  readonly args?: unknown;
  readonly restart: RestartType;
  readonly mailboxCapacity: number;
  readonly memoryMb: number;
  readonly shutdownMs: number;
}

export interface RestartPolicy {
  readonly strategy: 'one_for_one';
  /** More than `intensity` restarts within `periodMs` escalates. */
  readonly intensity: number;
  readonly periodMs: number;
  readonly backoffInitialMs: number;
  readonly backoffMaxMs: number;
  /** Fraction of the delay added or removed at random (0.2 = ±20%). */
  readonly jitter: number;
}

export interface LaneSpec {
  readonly lane: string;
  /** A required lane must be ready for the node to be ready. */
  readonly required: boolean;
  readonly policy: RestartPolicy;
  readonly children: readonly ChildSpec[];
  /** This lane's own start watchdog budget, instead of the system's `startTimeoutMs`. */
  readonly startTimeoutMs?: number;
}

/** Delay before restart number `attempt` (1-based): initial × 2^(attempt−1), capped, with jitter. */
export function backoffDelay(attempt: number, policy: RestartPolicy, random: () => number = Math.random): number {
  const exponential = policy.backoffInitialMs * 2 ** Math.max(0, attempt - 1);
  const capped = Math.min(policy.backoffMaxMs, exponential);
  const spread = capped * policy.jitter * (random() * 2 - 1);
  return Math.max(0, Math.round(capped + spread));
}

export type ExitDecision =
  | { readonly action: 'ignore' }
  | { readonly action: 'restart'; readonly attempt: number; readonly delayMs: number }
  | { readonly action: 'escalate'; readonly restartsInPeriod: number };

/** The restart bookkeeping of one lane. */
export class LaneSupervisor {
  state: LaneState = 'starting';
  lastError: string | null = null;
  lastErrorAt: number | null = null;
  failedReason: string | null = null;
  restartsTotal = 0;
  escalationsTotal = 0;
  private restartTimes: number[] = [];
  private readonly readyChildren = new Set<string>();
  private readonly degradedChildren = new Map<string, string>();

  constructor(readonly spec: LaneSpec, private readonly random: () => number = Math.random) {}

  get lane(): string { return this.spec.lane; }

  /** Decides what happens after a child exits. `requested` is true when the system asked it to stop. */
  onExit(child: ChildSpec, exitCode: number, reason: string | null, requested: boolean, now: number): ExitDecision {
    this.readyChildren.delete(child.name);
    this.degradedChildren.delete(child.name);
    if (requested || this.state === 'failed' || this.state === 'stopped') return { action: 'ignore' };
    const abnormal = exitCode !== 0 || reason !== null;
    if (reason !== null) this.noteError(reason, now);
    else this.noteError(`exited with code ${exitCode}`, now);
    if (child.restart === 'temporary' || (child.restart === 'transient' && !abnormal)) {
      this.refreshState();
      return { action: 'ignore' };
    }
    this.restartTimes = this.restartTimes.filter((at) => now - at < this.spec.policy.periodMs);
    this.restartTimes.push(now);
    if (this.restartTimes.length > this.spec.policy.intensity) {
      this.state = 'failed';
      this.escalationsTotal += 1;
      this.failedReason = `restart intensity exceeded: ${this.restartTimes.length} restarts within ${this.spec.policy.periodMs} ms (limit ${this.spec.policy.intensity}); last error: ${this.lastError}`;
      return { action: 'escalate', restartsInPeriod: this.restartTimes.length };
    }
    this.state = 'restarting';
    this.restartsTotal += 1;
    const attempt = this.restartTimes.length;
    return { action: 'restart', attempt, delayMs: backoffDelay(attempt, this.spec.policy, this.random) };
  }

  onReady(child: string): void {
    this.readyChildren.add(child);
    this.degradedChildren.delete(child);
    this.refreshState();
  }

  onDegraded(child: string, reason: string, now: number): void {
    this.readyChildren.delete(child);
    this.degradedChildren.set(child, reason);
    this.noteError(reason, now);
    this.refreshState();
  }

  /** True while `child` has reported ready since it last (re)started. */
  isReady(child: string): boolean {
    return this.readyChildren.has(child);
  }

  /** Children that have reported neither ready nor degraded since they last (re)started. */
  pendingChildren(): string[] {
    return this.spec.children.map((child) => child.name).filter((name) => !this.readyChildren.has(name) && !this.degradedChildren.has(name));
  }

  /** The start watchdog found `children` not ready `seconds` after the lane started: kept as the lane's last error. */
  onStartTimeout(children: readonly string[], seconds: number, now: number): void {
    const names = children.map((name) => `'${name}'`).join(', ');
    this.noteError(`${children.length === 1 ? 'worker' : 'workers'} ${names} did not report ready within ${seconds} s (runtime.start_timeout_seconds)`, now);
  }

  onStopped(): void {
    this.state = 'stopped';
  }

  private noteError(reason: string, now: number): void {
    this.lastError = reason.length > 500 ? `${reason.slice(0, 500)}…` : reason;
    this.lastErrorAt = now;
  }

  private refreshState(): void {
    if (this.state === 'failed' || this.state === 'stopped') return;
    if (this.degradedChildren.size > 0) this.state = 'degraded';
    else if (this.readyChildren.size === this.spec.children.length) this.state = 'ready';
    else if (this.state !== 'restarting') this.state = 'starting';
  }
}
