/**
 * Tracked views of ARRAY and FIXED_DICT values. Game code mutates them as plain
 * arrays and objects; each mutation is checked against the declared type and
 * reported to the owner with its change path. The stored data stays plain (the
 * views are Proxies over it), so encoders read it without indirection.
 */
import { ArrayType, DictType } from "./compound.ts";
import { PropertyError, ValueError } from "./errors.ts";
import { PropertyDef } from "./model.ts";
import { DataType } from "./types.ts";

/** What a tracked value reports to: the property container. */
export interface TrackOwner {
  /** Throws when the owner may not change state (a ghost). */
  assertWritable(prop: PropertyDef): void;
  /** Records a change: a set (start = -1) or a slice [start, end) replaced by `value`. */
  emit(
    prop: PropertyDef,
    path: readonly number[],
    value: unknown,
    start: number,
    end: number,
  ): void;
  /** Turns a ValueError into an error naming the entity, property and path. */
  fail(prop: PropertyDef, path: readonly number[], e: unknown): never;
}

/** Book-keeping for one stored array or dict: where it sits in its property. */
export class Node {
  readonly raw: unknown[] | Record<string, unknown>;
  readonly type: ArrayType | DictType;
  readonly prop: PropertyDef;
  readonly owner: TrackOwner;
  parent: Node | null;
  /** Index in the parent (element index or field index); unused at the top. */
  slot: number;
  attached = true;
  readonly proxy: object;
  methods: ArrayMethods | null = null;

  constructor(
    raw: unknown[] | Record<string, unknown>,
    type: ArrayType | DictType,
    prop: PropertyDef,
    owner: TrackOwner,
    parent: Node | null,
    slot: number,
  ) {
    this.raw = raw;
    this.type = type;
    this.prop = prop;
    this.owner = owner;
    this.parent = parent;
    this.slot = slot;
    this.proxy = new Proxy(
      raw,
      type instanceof ArrayType ? arrayHandler : dictHandler,
    );
  }
}

// Stored arrays and dicts are copies owned by exactly one place, so one map serves all containers.
const NODES = new WeakMap<object, Node>();

/** The tracked view of a top-level stored value. */
export function rootView(
  raw: unknown,
  prop: PropertyDef,
  owner: TrackOwner,
): unknown {
  const n = NODES.get(raw as object);
  if (n && n.attached) return n.proxy;
  const node = new Node(
    raw as unknown[],
    prop.type as ArrayType,
    prop,
    owner,
    null,
    prop.index,
  );
  NODES.set(raw as object, node);
  return node.proxy;
}

function childView(
  parent: Node,
  raw: unknown,
  slot: number,
  type: DataType,
): unknown {
  if (raw === null || typeof raw !== "object" || !type.nested) return raw;
  let n = NODES.get(raw);
  if (!n) {
    n = new Node(
      raw as unknown[],
      type as ArrayType,
      parent.prop,
      parent.owner,
      parent,
      slot,
    );
    NODES.set(raw, n);
  } else n.slot = slot;
  return n.proxy;
}

/** Marks a value removed from the state: changes through old views are no longer recorded. */
export function detach(v: unknown): void {
  if (v !== null && typeof v === "object") {
    const n = NODES.get(v);
    if (n) n.attached = false;
  }
}

/** The path of a node below its property, or null when it was removed from the state. */
function pathOf(node: Node, extra: number): number[] | null {
  let depth = extra >= 0 ? 1 : 0;
  for (let n: Node | null = node; n; n = n.parent) {
    if (!n.attached) return null;
    if (n.parent) depth++;
  }
  const path = new Array<number>(depth);
  let i = depth - 1;
  if (extra >= 0) path[i--] = extra;
  for (let n: Node | null = node; n && n.parent; n = n.parent) {
    path[i--] = n.slot;
  }
  return path;
}

function coerceAt(
  node: Node,
  type: DataType,
  v: unknown,
  slot: number,
): unknown {
  try {
    return type.coerce(v);
  } catch (e) {
    if (e instanceof ValueError) {
      node.owner.fail(node.prop, pathOf(node, slot) ?? [], e);
    }
    throw e;
  }
}

function setSlot(
  node: Node,
  slot: number,
  key: string | number,
  v: unknown,
  type: DataType,
): void {
  node.owner.assertWritable(node.prop);
  const nv = coerceAt(node, type, v, slot);
  const raw = node.raw as Record<string | number, unknown>;
  const old = raw[key];
  if (type.equals(old, nv)) return;
  detach(old);
  raw[key] = nv;
  const path = pathOf(node, slot);
  if (path) node.owner.emit(node.prop, path, nv, -1, -1);
}

function renumber(a: unknown[], from: number): void {
  for (let i = from; i < a.length; i++) {
    const v = a[i];
    if (v !== null && typeof v === "object") {
      const n = NODES.get(v);
      if (n) n.slot = i;
    }
  }
}

/** Replaces [start, end) of a tracked array with already-checked items; one slice change. */
export function spliceNode(
  node: Node,
  start: number,
  end: number,
  items: unknown[],
): unknown[] {
  const a = node.raw as unknown[];
  const type = node.type as ArrayType;
  try {
    type.checkLength(a.length - (end - start) + items.length);
  } catch (e) {
    node.owner.fail(node.prop, pathOf(node, -1) ?? [], e);
  }
  if (end === start && items.length === 0) return [];
  const removed = items.length === 0 ? a.splice(start, end - start) : a.splice(start, end - start, ...items);
  for (const r of removed) detach(r);
  if (type.of.nested) renumber(a, start);
  const path = pathOf(node, -1);
  if (path) node.owner.emit(node.prop, path, items, start, end);
  return removed;
}

function replaceAll(node: Node, next: unknown[]): void {
  const a = node.raw as unknown[];
  const kept = new Set(next);
  for (const r of a) if (!kept.has(r)) detach(r);
  a.length = 0;
  for (const v of next) a.push(v);
  renumber(a, 0);
  const path = pathOf(node, -1);
  if (path) node.owner.emit(node.prop, path, a, -1, -1);
}

interface ArrayMethods {
  push(...items: unknown[]): number;
  pop(): unknown;
  shift(): unknown;
  unshift(...items: unknown[]): number;
  splice(...args: unknown[]): unknown[];
  sort(cmp?: (a: unknown, b: unknown) => number): unknown;
  reverse(): unknown;
  fill(v: unknown, start?: number, end?: number): unknown;
  copyWithin(target: number, start: number, end?: number): unknown;
}

function clampIndex(i: number | undefined, len: number, dflt: number): number {
  if (i === undefined) return dflt;
  const n = Math.trunc(Number(i)) || 0;
  return n < 0 ? Math.max(len + n, 0) : Math.min(n, len);
}

function makeMethods(node: Node): ArrayMethods {
  const a = node.raw as unknown[];
  const type = node.type as ArrayType;
  const check = (items: unknown[], at: number): unknown[] => {
    node.owner.assertWritable(node.prop);
    return items.map((v, i) => coerceAt(node, type.of, v, at + i));
  };
  return {
    push: (...items) => {
      spliceNode(node, a.length, a.length, check(items, a.length));
      return a.length;
    },
    pop: () => {
      node.owner.assertWritable(node.prop);
      return a.length ? spliceNode(node, a.length - 1, a.length, [])[0] : undefined;
    },
    shift: () => {
      node.owner.assertWritable(node.prop);
      return a.length ? spliceNode(node, 0, 1, [])[0] : undefined;
    },
    unshift: (...items) => {
      spliceNode(node, 0, 0, check(items, 0));
      return a.length;
    },
    splice: (...args: unknown[]) => {
      const s = clampIndex(args[0] as number, a.length, 0);
      const dc = args.length < 2 ? a.length - s : Math.min(Math.max(Math.trunc(Number(args[1])) || 0, 0), a.length - s);
      return spliceNode(node, s, s + dc, check(args.slice(2), s));
    },
    sort: (cmp) => {
      node.owner.assertWritable(node.prop);
      const next = a.slice().sort(cmp as (x: unknown, y: unknown) => number);
      if (!next.every((v, i) => v === a[i])) replaceAll(node, next);
      return node.proxy;
    },
    reverse: () => {
      node.owner.assertWritable(node.prop);
      if (a.length > 1) replaceAll(node, a.slice().reverse());
      return node.proxy;
    },
    fill: (v, start, end) => {
      node.owner.assertWritable(node.prop);
      const s = clampIndex(start, a.length, 0);
      const e = clampIndex(end, a.length, a.length);
      const next = a.slice();
      for (let i = s; i < e; i++) next[i] = coerceAt(node, type.of, v, i);
      replaceAll(node, next);
      return node.proxy;
    },
    copyWithin: (target, start, end) => {
      node.owner.assertWritable(node.prop);
      const next = a.slice().copyWithin(target, start, end).map((v) => type.of.clone(v));
      replaceAll(node, next);
      return node.proxy;
    },
  };
}

function indexKey(k: string | symbol): number {
  if (typeof k !== "string") return -1;
  const c = k.charCodeAt(0);
  if (c < 48 || c > 57) return -1;
  const i = Number(k);
  return Number.isInteger(i) && String(i) === k ? i : -1;
}

function readOnlyOp(node: Node, what: string): never {
  throw new PropertyError(
    `${node.prop.name}: ${what} is not allowed on a tracked ${node.type.kind} value`,
  );
}

const MUTATORS = new Set([
  "push",
  "pop",
  "shift",
  "unshift",
  "splice",
  "sort",
  "reverse",
  "fill",
  "copyWithin",
]);

const arrayHandler: ProxyHandler<unknown[]> = {
  get(t, k, recv) {
    const i = indexKey(k);
    if (i >= 0) {
      const v = t[i];
      const node = NODES.get(t)!;
      return childView(node, v, i, (node.type as ArrayType).of);
    }
    if (typeof k === "string" && MUTATORS.has(k)) {
      const node = NODES.get(t)!;
      node.methods ??= makeMethods(node);
      return node.methods[k as keyof ArrayMethods];
    }
    return Reflect.get(t, k, recv);
  },
  set(t, k, v) {
    const node = NODES.get(t)!;
    if (k === "length") {
      node.owner.assertWritable(node.prop);
      const n = Number(v);
      if (!(Number.isInteger(n) && n >= 0 && n <= t.length)) {
        readOnlyOp(node, `growing with length = ${String(v)} (use push)`);
      }
      spliceNode(node, n, t.length, []);
      return true;
    }
    const i = indexKey(k);
    if (i < 0) return readOnlyOp(node, `setting '${String(k)}'`);
    if (i < t.length) setSlot(node, i, i, v, (node.type as ArrayType).of);
    else if (i === t.length) {
      node.methods ??= makeMethods(node);
      node.methods.push(v);
    } else readOnlyOp(node, `setting [${i}] past the end (length ${t.length})`);
    return true;
  },
  deleteProperty(t, k) {
    return readOnlyOp(NODES.get(t)!, `delete [${String(k)}]`);
  },
  defineProperty(t, k) {
    return readOnlyOp(NODES.get(t)!, `defineProperty '${String(k)}'`);
  },
};

const dictHandler: ProxyHandler<Record<string, unknown>> = {
  get(t, k, recv) {
    if (typeof k === "string") {
      const node = NODES.get(t)!;
      const type = node.type as DictType;
      const i = type.fieldIndex.get(k);
      if (i !== undefined) return childView(node, t[k], i, type.fields[i].type);
    }
    return Reflect.get(t, k, recv);
  },
  set(t, k, v) {
    const node = NODES.get(t)!;
    const type = node.type as DictType;
    const i = typeof k === "string" ? type.fieldIndex.get(k) : undefined;
    if (i === undefined) {
      return node.owner.fail(
        node.prop,
        pathOf(node, -1) ?? [],
        new ValueError(
          `unknown field '${String(k)}' (fields: ${type.fieldNames()})`,
        ),
      );
    }
    setSlot(node, i, k as string, v, type.fields[i].type);
    return true;
  },
  deleteProperty(t, k) {
    return readOnlyOp(NODES.get(t)!, `delete '${String(k)}'`);
  },
  defineProperty(t, k) {
    return readOnlyOp(NODES.get(t)!, `defineProperty '${String(k)}'`);
  },
};

/** The book-keeping of a stored array or dict, if a view of it was ever made. */
export function nodeOf(raw: unknown): Node | undefined {
  return raw !== null && typeof raw === "object" ? NODES.get(raw) : undefined;
}

export { renumber };
