/** Log levels in increasing severity. */
export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;

/** One of LOG_LEVELS. */
export type LogLevel = typeof LOG_LEVELS[number];

/** How log lines are written: a line of text, or one JSON object per line (`--log-format`). */
export const LOG_FORMATS = ["text", "json"] as const;

/** One of LOG_FORMATS. */
export type LogFormat = typeof LOG_FORMATS[number];

/** What a log line is about, for JSON lines: the entity and the space it names. */
export interface LogFields {
  entity?: number;
  space?: number;
}

/** A logger bound to a process role; lines go to stderr so stdout stays machine-readable. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger whose lines carry an extra tag, e.g. a channel's peer, and `fields` (an entity's logger, its id). */
  child(tag: string, fields?: LogFields): Logger;
  readonly level: LogLevel;
}

/** How a logger writes its lines besides its tag and level. */
export interface LoggerOptions {
  /** Text (the default) or JSON lines. */
  format?: LogFormat;
  /** The process's role, for JSON lines (cellappmgr, cellapp, baseapp, cluster). */
  role?: string;
  /** The process's id in the cluster (the cellappmgr is 0) once it has one, for JSON lines. */
  processId?: () => number | null;
}

const encoder = new TextEncoder();

/** Creates a logger that prints lines at or above `level`, tagged with `tag`, as text or JSON (`opts.format`). */
export function createLogger(tag: string, level: LogLevel = "info", opts: LoggerOptions = {}): Logger {
  return makeLogger(tag, level, opts, [], {});
}

function makeLogger(tag: string, level: LogLevel, opts: LoggerOptions, tags: string[], own: LogFields): Logger {
  const min = LOG_LEVELS.indexOf(level);
  const json = opts.format === "json";
  const write = (lvl: LogLevel, msg: string, fields?: LogFields) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return;
    const time = new Date().toISOString();
    const line = json
      ? jsonLine(time, lvl, opts, tags, msg, fields ? { ...own, ...fields } : own)
      : `${time} ${lvl.toUpperCase().padEnd(5)} ${tag}: ${msg}\n`;
    try {
      Deno.stderr.writeSync(encoder.encode(line));
    } catch {
      // stderr closed (parent gone): nothing left to tell.
    }
  };
  return {
    level,
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (t, f) => makeLogger(`${tag} ${t}`, level, opts, [...tags, t], f ? { ...own, ...f } : own),
  };
}

/** One JSON log line: time, level, role, pid, the cluster's process id when known, tags, message, entity, space. */
function jsonLine(
  time: string,
  level: LogLevel,
  opts: LoggerOptions,
  tags: string[],
  msg: string,
  fields: LogFields,
): string {
  const process = opts.processId?.() ?? null;
  return JSON.stringify({
    time,
    level,
    role: opts.role ?? null,
    pid: Deno.pid,
    ...(process === null ? {} : { process }),
    ...(tags.length ? { tag: tags.join(" ") } : {}),
    msg,
    ...(fields.entity === undefined ? {} : { entity: fields.entity }),
    ...(fields.space === undefined ? {} : { space: fields.space }),
  }) + "\n";
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
