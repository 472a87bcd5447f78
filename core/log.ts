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
