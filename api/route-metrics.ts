/**
 * Per-route request metrics at the cost of a few increments per request: a plain counter per
 * (route, status) and fixed bucket counts per route, turned into prom-client's metric shape only
 * when the registry is read (`/metrics`, or the root aggregating every worker). prom-client's own
 * Counter/Histogram hash their label objects on every observation, which showed up as a measurable
 * share of a one-block query.
 *
 * A requests counter `{route,status}` and a duration histogram `{route}`, under the names and help texts
 * the listener lane declares (actors/listener/metrics.ts), which creates one per worker.
 */
import type { Metric, Registry } from 'prom-client';

/** One sample as prom-client's registry reads it (`metricName` for a histogram's _bucket/_sum/_count). */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName?: string;
}

/** A metric's name and help text. */
export interface MetricText {
  readonly name: string;
  readonly help: string;
}

const BUCKETS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5] as const;

interface RouteTally {
  readonly route: string;
  /** Observations per bucket, not cumulative; the last slot is +Inf. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
  readonly statuses: Map<number, number>;
}

export class RouteMetrics {
  private readonly tallies = new Map<string, RouteTally>();
  private readonly durationName: string;

  constructor(registry: Registry, requests: MetricText, duration: MetricText) {
    this.durationName = duration.name;
    const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => Sample[]) => {
      // The shape prom-client's own AggregatorRegistry registers: a name and a `get` returning the values.
      registry.registerMetric({ name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }), reset: () => this.tallies.clear() } as unknown as Metric);
    };
    metric(requests.name, requests.help, 'counter', () => this.requestValues());
    metric(duration.name, duration.help, 'histogram', () => this.durationValues());
  }

  /** One answered request. */
  observe(route: string, status: number, seconds: number): void {
    let tally = this.tallies.get(route);
    if (tally === undefined) {
      tally = { route, buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0, statuses: new Map() };
      this.tallies.set(route, tally);
    }
    let bucket = 0;
    while (bucket < BUCKETS.length && seconds > BUCKETS[bucket]!) bucket += 1;
    tally.buckets[bucket]! += 1;
    tally.sum += seconds;
    tally.count += 1;
    tally.statuses.set(status, (tally.statuses.get(status) ?? 0) + 1);
  }

  private requestValues(): Sample[] {
    const values: Sample[] = [];
    for (const tally of this.tallies.values()) {
      for (const [status, count] of tally.statuses) values.push({ labels: { route: tally.route, status: String(status) }, value: count });
    }
    return values;
  }

  private durationValues(): Sample[] {
    const values: Sample[] = [];
    for (const tally of this.tallies.values()) {
      let cumulative = 0;
      for (let i = 0; i <= BUCKETS.length; i += 1) {
        cumulative += tally.buckets[i]!;
        values.push({ labels: { route: tally.route, le: i < BUCKETS.length ? BUCKETS[i]! : '+Inf' }, value: cumulative, metricName: `${this.durationName}_bucket` });
      }
      values.push({ labels: { route: tally.route }, value: tally.sum, metricName: `${this.durationName}_sum` });
      values.push({ labels: { route: tally.route }, value: tally.count, metricName: `${this.durationName}_count` });
    }
    return values;
  }
}
