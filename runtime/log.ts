import { pino, type Logger as Pino } from 'pino';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  child(lane: string): Logger;
}

export interface LoggerOptions {
  readonly lane: string;
  readonly level: LogLevel | string;
  /** Lines per second this logger may write; the excess is counted and reported once room returns. */
  readonly maxLinesPerSecond: number;
  /** Where lines go; defaults to standard output (synchronous, so a crash loses nothing). */
  readonly destination?: NodeJS.WritableStream | { write(line: string): unknown };
}

/** Field names whose values are never written, wherever they appear in the first two levels. */
const SECRET_FIELDS = ['token', 'authorization', 'credential', 'secret', 'password', 'bearer', 'apiKey'];
const REDACT_PATHS = [...SECRET_FIELDS, ...SECRET_FIELDS.map((field) => `*.${field}`)];

/** A URL with its credentials, query and fragment removed: safe to log. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    const hadQuery = parsed.search !== '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString() + (hadQuery ? '?…' : '');
  } catch {
    return '<unparseable url>';
  }
}

export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? pino.destination({ dest: 1, sync: true });
  const base = pino(
    {
      level: options.level,
      messageKey: 'message',
      base: undefined,
      timestamp: () => `,"time":"${new Date().toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    },
    destination as pino.DestinationStream,
  );
  return new RateBoundedLogger(base, options.lane, new TokenBucket(options.maxLinesPerSecond));
}

class TokenBucket {
  private tokens: number;
  private last = Date.now();
  suppressed = 0;

  constructor(private readonly perSecond: number) {
    this.tokens = perSecond;
  }

  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.last) / 1000) * this.perSecond);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    this.suppressed += 1;
    return false;
  }
}

class RateBoundedLogger implements Logger {
  private readonly pino: Pino;

  constructor(private readonly root: Pino, lane: string, private readonly bucket: TokenBucket) {
    this.pino = root.child({ lane });
  }

  debug(message: string, fields?: LogFields): void { this.write('debug', message, fields); }
  info(message: string, fields?: LogFields): void { this.write('info', message, fields); }
  warn(message: string, fields?: LogFields): void { this.write('warn', message, fields); }
  error(message: string, fields?: LogFields): void { this.write('error', message, fields); }

  child(lane: string): Logger {
    return new RateBoundedLogger(this.root, lane, this.bucket);
  }

  private write(level: LogLevel, message: string, fields?: LogFields): void {
    if (!this.pino.isLevelEnabled(level)) return;
    if (!this.bucket.take()) return;
    if (this.bucket.suppressed > 0) {
      this.pino.warn({ suppressed: this.bucket.suppressed }, 'log lines suppressed by the rate bound');
      this.bucket.suppressed = 0;
    }
    if (fields) this.pino[level](fields, message);
    else this.pino[level](message);
  }
}

/** Plain error fields for a log line. */
export function errorFields(error: unknown): LogFields {
  if (error instanceof Error) return { error: { name: error.name, message: error.message } };
  return { error: { message: String(error) } };
}
