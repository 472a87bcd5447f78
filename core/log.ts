/** Log levels in increasing severity. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** One of LOG_LEVELS. */
export type LogLevel = typeof LOG_LEVELS[number];

/** A logger bound to a process role; lines go to stderr so stdout stays machine-readable. */
export interface Logger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
  /** A logger whose lines carry an extra tag, e.g. a channel's peer. */
  child(tag: string): Logger;
  readonly level: LogLevel;
}

const encoder = new TextEncoder();

/** Creates a logger that prints lines at or above `level`, tagged with `tag`. */
export function createLogger(tag: string, level: LogLevel = "info"): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const write = (lvl: LogLevel, msg: string) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return;
    const line = `${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} ${tag}: ${msg}\n`;
    try {
      Deno.stderr.writeSync(encoder.encode(line));
    } catch {
      // stderr closed (parent gone): nothing left to tell.
    }
  };
  return {
    level,
    debug: (m) => write("debug", m),
    info: (m) => write("info", m),
    warn: (m) => write("warn", m),
    error: (m) => write("error", m),
    child: (t) => createLogger(`${tag} ${t}`, level),
  };
}

/** A logger that drops everything, for tests and benchmarks that only count. */
export const silentLogger: Logger = {
  level: "error",
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};

/**
 * Lets one log line per key through per interval, so that a client or peer
 * repeating a mistake cannot flood the logs; counts what it held back.
 */
export class Throttle {
  #last = new Map<unknown, { at: number; held: number }>();

  constructor(readonly intervalMs: number, private readonly now: () => number = () => performance.now()) {}

  /**
   * Null when a line about `key` was let through within the interval (this
   * one is held back); otherwise how many were held back since the last one.
   */
  take(key: unknown): number | null {
    const now = this.now();
    const seen = this.#last.get(key);
    if (seen && now - seen.at < this.intervalMs) {
      seen.held++;
      return null;
    }
    if (this.#last.size >= 10_000) this.#sweep(now);
    this.#last.set(key, { at: now, held: 0 });
    return seen?.held ?? 0;
  }

  /** Text to append to a line let through: how many like it were held back. */
  static note(held: number): string {
    return held > 0 ? ` (${held} more like it held back)` : "";
  }

  #sweep(now: number): void {
    for (const [k, v] of this.#last) if (now - v.at >= this.intervalMs) this.#last.delete(k);
    // Still full: keys are all recent; forget the oldest half rather than grow.
    if (this.#last.size >= 10_000) {
      let n = this.#last.size / 2;
      for (const k of this.#last.keys()) {
        if (n-- <= 0) break;
        this.#last.delete(k);
      }
    }
  }
}
