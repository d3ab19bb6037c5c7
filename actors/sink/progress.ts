/**
 * Bootstrap progress (issue 32 point 4): rows copied, rows per second and the time left, as a log line every
 * interval and, when standard error is a terminal, as one line rewritten in place.
 */
import type { Logger } from '../../runtime/log.js';

export interface ProgressOptions {
  readonly log: Logger;
  readonly processor: string;
  readonly collection: string;
  /** Rows the snapshot holds (its rowCount). */
  readonly total: number;
  readonly intervalMs: number;
  /** A terminal to draw on (process.stderr when it is one), or null. */
  readonly tty: { write(text: string): unknown } | null;
  readonly now?: () => number;
}

export interface ProgressReport {
  readonly rows: number;
  readonly total: number;
  readonly rowsPerSecond: number;
  /** Seconds left at the current rate; null before any row. */
  readonly etaSeconds: number | null;
}

export class BootstrapProgress {
  private rows = 0;
  private readonly started: number;
  private lastReport: number;
  private readonly now: () => number;

  constructor(private readonly options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.started = this.now();
    this.lastReport = this.started;
  }

  add(rows: number): void {
    this.rows += rows;
    const now = this.now();
    if (now - this.lastReport < this.options.intervalMs) return;
    this.lastReport = now;
    const report = this.report();
    this.options.log.info('bootstrap progress', { processor: this.options.processor, collection: this.options.collection, ...report });
    this.options.tty?.write(`\r${this.line(report)}\u001b[K`);
  }

  report(): ProgressReport {
    const elapsed = Math.max(1, this.now() - this.started) / 1000;
    const rate = this.rows / elapsed;
    return {
      rows: this.rows,
      total: this.options.total,
      rowsPerSecond: Math.round(rate),
      etaSeconds: rate > 0 ? Math.max(0, Math.round((this.options.total - this.rows) / rate)) : null,
    };
  }

  line(report = this.report()): string {
    const percent = report.total > 0 ? ` (${((100 * report.rows) / report.total).toFixed(1)}%)` : '';
    const eta = report.etaSeconds === null ? '' : `, ETA ${report.etaSeconds} s`;
    return `bootstrap ${this.options.processor}/${this.options.collection}: ${report.rows.toLocaleString('en-US')} of ${report.total.toLocaleString('en-US')} rows${percent}, ${report.rowsPerSecond.toLocaleString('en-US')} rows/s${eta}`;
  }

  /** The closing line: copied rows and the average rate. */
  finish(): ProgressReport {
    const report = this.report();
    this.options.log.info('bootstrap copied', { processor: this.options.processor, collection: this.options.collection, ...report });
    this.options.tty?.write(`\r${this.line(report)}\u001b[K\n`);
    return report;
  }
}
