/** Small argument checks for message definitions: each returns null or a reason. */
import { MAX_ENTITY_ID } from "../bytes/mod.ts";
import { MAX_COORD } from "../geo/mod.ts";

/** A check of one decoded value. */
export type Check = (v: unknown) => string | null;

/** Accepts exactly the tuple described by `items` (extra or missing arguments are refused). */
export function tuple(...items: Check[]): (args: unknown[]) => string | null {
  return (args) => {
    if (args.length !== items.length) {
      return `expected ${items.length} arguments, got ${args.length}`;
    }
    for (let i = 0; i < items.length; i++) {
      const why = items[i](args[i]);
      if (why) return `argument ${i}: ${why}`;
    }
    return null;
  };
}

/** An integer within [min, max]. */
export const int = (min = -Infinity, max = Infinity): Check => (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= min && v <= max
    ? null
    : `expected an integer in ${min}..${max}, got ${show(v)}`;

/** A finite number. */
export const num: Check = (v) =>
  typeof v === "number" && Number.isFinite(v) ? null : `expected a number, got ${show(v)}`;

/** A finite number within [min, max]. */
export const numIn = (min: number, max: number): Check => (v) =>
  typeof v === "number" && v >= min && v <= max ? null : `expected a number in ${min}..${max}, got ${show(v)}`;

export { MAX_ENTITY_ID } from "../bytes/mod.ts";

/** An entity id. */
export const entityId: Check = int(1, MAX_ENTITY_ID);

/** A space id. */
export const spaceId: Check = int(1, 2 ** 32 - 1);

/** A cell's id within its space. */
export const cellId: Check = int(1, 2 ** 31);

/** A process id as the cellappmgr hands them out. */
export const processId: Check = int(1, 2 ** 31);

export { MAX_COORD } from "../geo/mod.ts";

/** A coordinate in metres. */
export const coord: Check = numIn(-MAX_COORD, MAX_COORD);

/** [x, y, z] (or [yaw, pitch, roll]) of finite numbers within MAX_COORD. */
export const vec3: Check = (v) =>
  Array.isArray(v) && v.length === 3 && v.every((n) => coord(n) === null)
    ? null
    : `expected [x, y, z] of numbers within ±${MAX_COORD}, got ${show(v)}`;

/** A listening address HOST:PORT (IPv6 in brackets) with a port in 1..65535. */
export const address: Check = (v) => {
  if (typeof v !== "string" || v.length > 300) return `expected a HOST:PORT address, got ${show(v)}`;
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-_]+):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[2]) : 0;
  return m && port >= 1 && port <= 65535 ? null : `expected a HOST:PORT address, got ${show(v)}`;
};

/** A string no longer than `max`. */
export const str = (max = 4096): Check => (v) =>
  typeof v === "string" && v.length <= max ? null : `expected a string of at most ${max} characters, got ${show(v)}`;

/** A boolean. */
export const bool: Check = (v) => typeof v === "boolean" ? null : `expected a boolean, got ${show(v)}`;

/** Raw bytes no longer than `max`. */
export const bytes = (max = 1 << 20): Check => (v) =>
  v instanceof Uint8Array && v.length <= max ? null : `expected at most ${max} bytes, got ${show(v)}`;

/** One of the listed literal values. */
export const oneOf = <T extends string | number>(...values: T[]): Check => (v) =>
  values.includes(v as T) ? null : `expected one of ${values.join(", ")}, got ${show(v)}`;

/** `inner`, or null/undefined. */
export const optional = (inner: Check): Check => (v) => v === undefined || v === null ? null : inner(v);

/** Anything (for payloads checked further down). */
export const any: Check = () => null;

/** A plain object whose listed fields pass their checks; other fields are refused. */
export function obj(fields: Record<string, Check>): Check {
  const names = Object.keys(fields);
  return (v) => {
    if (
      typeof v !== "object" || v === null || Array.isArray(v) ||
      v instanceof Uint8Array
    ) {
      return `expected an object, got ${show(v)}`;
    }
    for (const k of Object.keys(v)) {
      if (!(k in fields)) return `unexpected field "${k}"`;
    }
    for (const k of names) {
      const why = fields[k]((v as Record<string, unknown>)[k]);
      if (why) return `field "${k}": ${why}`;
    }
    return null;
  };
}

/** An array of at most `max` items, each passing `item`. */
export const arrayOf = (item: Check, max = 1 << 16): Check => (v) => {
  if (!Array.isArray(v) || v.length > max) {
    return `expected an array of at most ${max} items, got ${show(v)}`;
  }
  for (let i = 0; i < v.length; i++) {
    const why = item(v[i]);
    if (why) return `item ${i}: ${why}`;
  }
  return null;
};

function show(v: unknown): string {
  if (v instanceof Uint8Array) return `${v.length} bytes`;
  if (Array.isArray(v)) return `an array of ${v.length}`;
  const s = typeof v === "string" ? JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v) : String(v);
  return typeof v === "object" && v !== null ? "an object" : s;
}
