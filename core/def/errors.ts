/**
 * Errors and warnings of the definition system. Every message names where the
 * problem is (file:line when known, entity, property or method) and what is wrong.
 */

/** Where a definition came from: a file and a 1-based line. */
export interface SourcePos {
  /** The file. */
  readonly file: string;
  /** The line, from 1. */
  readonly line: number;
}

/** Context that locates a definition problem. */
export interface DefContext {
  /** Where in a file. */
  readonly source?: SourcePos;
  /** The entity type. */
  readonly entity?: string;
  /** The property or method. */
  readonly member?: string;
}

function where(ctx: DefContext): string {
  const parts: string[] = [];
  if (ctx.source) parts.push(`${ctx.source.file}:${ctx.source.line}`);
  if (ctx.entity !== undefined || ctx.member !== undefined) {
    parts.push(
      [ctx.entity, ctx.member].filter((s) => s !== undefined).join("."),
    );
  }
  return parts.length ? parts.join(": ") + ": " : "";
}

/** A definition that cannot be loaded: bad XML, unknown type or flag, bad default, ... */
export class DefError extends Error {
  /** Where in a file, when known. */
  readonly source?: SourcePos;
  /** The entity type, when known. */
  readonly entity?: string;
  /** The property or method, when known. */
  readonly member?: string;
  /** What is wrong, without where. */
  readonly reason: string;

  /** `reason` with where it is (`file:line: Entity.member: `) in front. */
  constructor(reason: string, ctx: DefContext = {}, options?: ErrorOptions) {
    super(where(ctx) + reason, options);
    this.name = "DefError";
    this.reason = reason;
    this.source = ctx.source;
    this.entity = ctx.entity;
    this.member = ctx.member;
  }
}

/** Something in a definition that has no meaning here and was kept as metadata or ignored. */
export interface DefWarning extends DefContext {
  /** What is wrong. */
  readonly message: string;
}

/** Formats a warning as one line: `file:line: Entity.member: message`. */
export function formatWarning(w: DefWarning): string {
  return where(w) + w.message;
}

/**
 * A run-time value that does not fit its declared type. Thrown by type checks;
 * `path` grows as the error unwinds out of nested arrays and dicts.
 */
export class ValueError extends Error {
  reason: string;
  path: string;

  constructor(reason: string, options?: ErrorOptions) {
    super(reason, options);
    this.name = "ValueError";
    this.reason = reason;
    this.path = "";
  }

  /** Prefixes a path segment (`[3]` or `.field`) while unwinding. */
  at(segment: string): ValueError {
    this.path = segment + this.path;
    this.message = `${this.path}: ${this.reason}`;
    return this;
  }
}

/** A property value rejected at the moment of a set, naming entity type, property and value. */
export class PropertyError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PropertyError";
  }
}

/** Short printable form of a value for error messages. */
export function show(v: unknown): string {
  if (typeof v === "string") {
    return JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v);
  }
  if (typeof v === "bigint") return `${v}n`;
  if (v instanceof Uint8Array) return `Uint8Array(${v.length})`;
  if (Array.isArray(v)) return `array(${v.length})`;
  if (v === null || typeof v !== "object") return String(v);
  try {
    const s = JSON.stringify(v);
    return s.length > 60 ? s.slice(0, 60) + "…" : s;
  } catch {
    return Object.prototype.toString.call(v);
  }
}
