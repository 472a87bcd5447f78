/**
 * The run-time property container of one entity part (cell, ghost, base,
 * client): typed get/set with checks at the moment of the set, tracked nested
 * values, change records sent to a sink, and a read-only (ghost) mode.
 */
import { ArrayType, DictType } from "./compound.ts";
import { PropertyError, ValueError } from "./errors.ts";
import { AUD, Audience } from "./flags.ts";
import { EntityType, PropertyDef } from "./model.ts";
import { describePath, pathText, typeAtPath, valueAtPath } from "./paths.ts";
import { detach, nodeOf, renumber, rootView, TrackOwner } from "./tracked.ts";

/**
 * Receives every change as it happens. `start === -1` is a set of `value` at
 * `path`; otherwise the array at `path` had [start, end) replaced by the
 * elements in `value`. `path` and `value` are live: copy them to keep them.
 */
export interface ChangeSink {
  /** Called once per change, after it is applied: a set of `value` at `path` (start -1) or a slice. */
  onChange(
    prop: PropertyDef,
    path: readonly number[],
    value: unknown,
    start: number,
    end: number,
  ): void;
}

/** A change as data: what a sink saw, or what a decoder read. */
export interface ChangeRecord {
  /** "set" replaces the value at `path`; "slice" replaces `[start, end)` of the array at `path`. */
  readonly kind: "set" | "slice";
  /** The property index. */
  readonly index: number;
  /** One index per level below the property; empty for the whole property. */
  readonly path: readonly number[];
  /** The new value (set) or the new elements (slice). */
  readonly value: unknown;
  /** Slice only: the replaced range [start, end) of the array at `path`; -1 for a set. */
  readonly start: number;
  /** Slice only: the end (exclusive) of the replaced range; -1 for a set. */
  readonly end: number;
}

/** Which properties a container holds: one audience's, or every one ("all"). */
export type Scope = Audience | "all";

const EMPTY: readonly number[] = Object.freeze([]);
const VIEW_OWNER = Symbol("container");
// Keyed by the properties array too: a type that adopted a later definition (EntityType.adopt) gets a new prototype.
const viewProtos = new WeakMap<EntityType, { of: readonly PropertyDef[]; proto: object }>();

function viewProto(type: EntityType): object {
  const cached = viewProtos.get(type);
  if (cached && cached.of === type.properties) return cached.proto;
  const proto: object = Object.create(null);
  for (const p of type.properties) {
    const i = p.index;
    Object.defineProperty(proto, p.name, {
      enumerable: true,
      get(this: { [VIEW_OWNER]: PropertyContainer }) {
        return this[VIEW_OWNER].getAt(i);
      },
      set(this: { [VIEW_OWNER]: PropertyContainer }, v: unknown) {
        this[VIEW_OWNER].setAt(i, v);
      },
    });
  }
  // Printed and serialised as its values (its properties are accessors on this prototype, which console.log and
  // JSON.stringify would not show); a property of the same name wins.
  const plain = function (this: { [VIEW_OWNER]: PropertyContainer }): Record<string, unknown> {
    return this[VIEW_OWNER].plain();
  };
  const extras: [PropertyKey, unknown][] = [
    ["toJSON", plain],
    [Symbol.for("Deno.customInspect"), function (
      this: { [VIEW_OWNER]: PropertyContainer },
      inspect: (v: unknown, o?: unknown) => string,
      options?: unknown,
    ) {
      return inspect(this[VIEW_OWNER].plain(), options);
    }],
    [Symbol.for("nodejs.util.inspect.custom"), plain],
  ];
  for (const [key, value] of extras) {
    if (!Object.hasOwn(proto, key)) Object.defineProperty(proto, key, { value, enumerable: false });
  }
  viewProtos.set(type, { of: type.properties, proto });
  return proto;
}

/** Options for a new container. */
export interface ContainerOptions {
  /** The entity the properties belong to, named in errors (default 0). */
  readonly entityId?: number;
  /** Receives every change (default none). */
  readonly sink?: ChangeSink | null;
  /** Ghost mode: every set throws; replayed changes still apply. */
  readonly readOnly?: boolean;
}

/** The property values of one entity part, by property index. */
export class PropertyContainer<V = Record<string, unknown>> implements TrackOwner {
  /** The entity type whose properties these are. */
  readonly type: EntityType;
  /** Whose properties it holds: one audience's (a client holds "otherClients" or "ownClient"), or "all". */
  readonly scope: Scope;
  /** Bits of the audiences whose properties this container holds. */
  readonly scopeMask: number;
  /** Stored values by property index (undefined outside the scope). Plain data: read, don't write. */
  readonly values: unknown[];
  /** The entity the properties belong to (named in errors). */
  entityId: number;
  /** Ghost mode: every set throws; replayed changes (apply) still apply. */
  readOnly: boolean;
  /** Receives every change; null: none. */
  sink: ChangeSink | null;
  /** Property accessors by name: `c.view.hp = 3`, `c.view.inventory.push(...)`. */
  readonly view: V;

  /** A container of `type`'s properties in `scope`, each at its default. */
  constructor(type: EntityType, scope: Scope, opts: ContainerOptions = {}) {
    this.type = type;
    this.scope = scope;
    this.scopeMask = scope === "all" ? 0xff : AUD[scope];
    this.entityId = opts.entityId ?? 0;
    this.readOnly = opts.readOnly ?? false;
    this.sink = opts.sink ?? null;
    this.values = new Array(type.properties.length);
    for (const p of type.properties) {
      if ((p.mask & this.scopeMask) !== 0) {
        this.values[p.index] = p.type.clone(p.default);
      }
    }
    const view = Object.create(viewProto(type));
    view[VIEW_OWNER] = this;
    this.view = view as V;
  }

  /**
   * Follows its type after the type adopted a later definition (EntityType.adopt): properties added since get their
   * defaults, and the view gets their accessors (it stays the same object, so whoever holds it sees them).
   */
  upgrade(): void {
    for (const p of this.type.properties) {
      if (p.index >= this.values.length && (p.mask & this.scopeMask) !== 0) {
        this.values[p.index] = p.type.clone(p.default);
      }
    }
    this.values.length = Math.max(this.values.length, this.type.properties.length);
    Object.setPrototypeOf(this.view, viewProto(this.type));
  }

  /** Whether this container holds the property. */
  holds(prop: PropertyDef): boolean {
    return (prop.mask & this.scopeMask) !== 0;
  }

  /** The property at index `i`; throws PropertyError when the type has none or this container does not hold it. */
  private prop(i: number): PropertyDef {
    const p = this.type.properties[i];
    if (!p) {
      throw new PropertyError(
        `${this.type.name} has no property with index ${i}`,
      );
    }
    if ((p.mask & this.scopeMask) === 0) {
      throw new PropertyError(
        `${this.type.name}.${p.name} (${p.flags}) is not held by the ${this.scope} part of entity ${this.entityId}`,
      );
    }
    return p;
  }

  /** The values this container holds as a plain object by property name (stored data: don't mutate it). */
  plain(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const p of this.type.properties) if (this.holds(p)) out[p.name] = this.values[p.index];
    return out;
  }

  /** The value of a property by name; arrays and dicts come back as tracked views. */
  get(name: string): unknown {
    return this.getAt(this.type.property(name).index);
  }

  /** Sets a property by name (checked now; a change is recorded unless the value is equal). */
  set(name: string, value: unknown): void {
    const p = this.type.findProperty(name);
    if (!p) {
      throw new PropertyError(`${this.type.name} has no property '${name}'`);
    }
    this.setAt(p.index, value);
  }

  /** The value of a property by index; arrays and dicts come back as tracked views. */
  getAt(i: number): unknown {
    const p = this.prop(i);
    const v = this.values[i];
    return p.type.nested ? rootView(v, p, this) : v;
  }

  /** Sets a property by index. */
  setAt(i: number, value: unknown): void {
    const p = this.prop(i);
    this.assertWritable(p);
    let nv: unknown;
    try {
      nv = p.type.coerce(value);
    } catch (e) {
      this.fail(p, EMPTY, e);
    }
    const old = this.values[i];
    if (p.type.equals(old, nv)) return;
    if (p.type.nested) detach(old);
    this.values[i] = nv;
    if (this.sink !== null) this.sink.onChange(p, EMPTY, nv, -1, -1);
  }

  /** The stored value without a view (for encoders; do not mutate it). */
  raw(i: number): unknown {
    return this.values[i];
  }

  /** Stores a decoded value without checks or records (state decoders). */
  load(i: number, value: unknown): void {
    const p = this.prop(i);
    if (p.type.nested) detach(this.values[i]);
    this.values[i] = value;
  }

  /**
   * Replays a change from the real entity or the server (allowed in read-only
   * mode). With `copy`, the value is checked and copied first; decoders pass
   * false because what they read is fresh. The change goes on to the sink.
   */
  apply(rec: ChangeRecord, copy = true): void {
    const p = this.prop(rec.index);
    const path = rec.path;
    const n = path.length;
    if (rec.kind === "set" && n === 0) {
      const nv = copy ? this.check(p, path, p.type, rec.value) : rec.value;
      if (p.type.nested) detach(this.values[rec.index]);
      this.values[rec.index] = nv;
    } else if (rec.kind === "set") {
      const parentType = typeAtPath(p.type, path, n - 1);
      const parent = valueAtPath(p.type, this.values[rec.index], path, n - 1);
      const k = path[n - 1];
      const t = typeAtPath(p.type, path);
      const nv = copy ? this.check(p, path, t, rec.value) : rec.value;
      if (parentType instanceof ArrayType) {
        const a = parent as unknown[];
        if (!(k >= 0 && k < a.length)) {
          throw new RangeError(
            `change path ${pathText(path)} is outside the array`,
          );
        }
        detach(a[k]);
        a[k] = nv;
      } else {
        const name = (parentType as DictType).fields[k].name;
        const o = parent as Record<string, unknown>;
        detach(o[name]);
        o[name] = nv;
      }
    } else {
      const t = typeAtPath(p.type, path);
      if (!(t instanceof ArrayType)) {
        throw new RangeError(
          `slice change at ${pathText(path)} is not on an array`,
        );
      }
      const a = valueAtPath(p.type, this.values[rec.index], path) as unknown[];
      if (!(0 <= rec.start && rec.start <= rec.end && rec.end <= a.length)) {
        throw new RangeError(
          `slice [${rec.start}, ${rec.end}) is outside the array of ${a.length}`,
        );
      }
      const items = copy ? this.check(p, path, new ArrayType(t.of), rec.value) as unknown[] : rec.value as unknown[];
      const removed = a.splice(rec.start, rec.end - rec.start, ...items);
      for (const r of removed) detach(r);
      if (t.of.nested && nodeOf(a)) renumber(a, rec.start);
    }
    if (this.sink !== null) {
      this.sink.onChange(p, path, rec.value, rec.start, rec.end);
    }
  }

  /** `v` coerced to type `t`; throws an error naming the entity, property and path when it does not fit. */
  private check(
    p: PropertyDef,
    path: readonly number[],
    t: { coerce(v: unknown): unknown },
    v: unknown,
  ): unknown {
    try {
      return t.coerce(v);
    } catch (e) {
      return this.fail(p, path, e);
    }
  }

  /** TrackOwner: throws on a ghost (only the real may change state). */
  assertWritable(prop: PropertyDef): void {
    if (this.readOnly) {
      throw new PropertyError(
        `cannot set ${this.type.name}.${prop.name} on ghost entity ${this.entityId}: only the real entity may change its properties`,
      );
    }
  }

  /** TrackOwner: reports a change, as a whole-property change when sendLatestOnly. */
  emit(
    prop: PropertyDef,
    path: readonly number[],
    value: unknown,
    start: number,
    end: number,
  ): void {
    const sink = this.sink;
    if (sink === null) return;
    if (prop.sendLatestOnly && (path.length > 0 || start >= 0)) {
      // A forced change: a partial change of a latest-only property resends all of it.
      sink.onChange(prop, EMPTY, this.values[prop.index], -1, -1);
    } else sink.onChange(prop, path, value, start, end);
  }

  /** TrackOwner: rethrows a check failure naming the entity type, property path and value. */
  fail(prop: PropertyDef, path: readonly number[], e: unknown): never {
    if (e instanceof ValueError) {
      const at = describePath(prop, path) + e.path;
      throw new PropertyError(`${this.type.name}.${at}: ${e.reason}`);
    }
    throw e;
  }
}

/** Turns what a sink saw into a record (copying the path; the value is not copied). */
export function toRecord(
  prop: PropertyDef,
  path: readonly number[],
  value: unknown,
  start: number,
  end: number,
): ChangeRecord {
  return {
    kind: start < 0 ? "set" : "slice",
    index: prop.index,
    path: path.slice(),
    value,
    start,
    end,
  };
}
