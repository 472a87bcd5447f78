/**
 * Container and extension types: ARRAY<T>, FIXED_DICT {field: T}, user types
 * registered with an encoder and a decoder, and the msgpack-encoded dynamic
 * type that PYTHON / PY_DICT values map to.
 */
import { errorText } from "../errors.ts";
import { decode as mpDecode, encode as mpEncode } from "@msgpack/msgpack";
import { ByteReader, ByteWriter, DEFAULT_MSGPACK_LIMITS, type MsgpackLimits, scanMsgpack } from "../bytes/mod.ts";

const DYNAMIC_LIMITS: MsgpackLimits = { ...DEFAULT_MSGPACK_LIMITS, ext: {} };
import { show, ValueError } from "./errors.ts";
import { DataType, typeOf, ValueOf } from "./types.ts";

/** ARRAY<T>: a JavaScript array; mutations are recorded with change paths. */
export class ArrayType<E = unknown> extends DataType<E[]> {
  readonly kind = "ARRAY" as const;
  override readonly nested = true;
  readonly of: DataType<E>;
  readonly maxLength: number | null;

  constructor(of: DataType<E>, maxLength: number | null = null) {
    super();
    this.of = of;
    this.maxLength = maxLength;
  }
  get name(): string {
    return this.maxLength === null ? `ARRAY<${this.of.name}>` : `ARRAY<${this.of.name}>(${this.maxLength})`;
  }
  coerce(v: unknown): E[] {
    if (!Array.isArray(v)) {
      throw new ValueError(
        `${show(v)} is a ${typeOf(v)}, expected ${this.name}`,
      );
    }
    this.checkLength(v.length);
    const n = v.length;
    const out = new Array<E>(n);
    const of = this.of;
    for (let i = 0; i < n; i++) {
      try {
        out[i] = of.coerce(v[i]);
      } catch (e) {
        throw e instanceof ValueError ? e.at(`[${i}]`) : e;
      }
    }
    return out;
  }
  /** Throws when an array would grow past its declared maximum. */
  checkLength(n: number): void {
    if (this.maxLength !== null && n > this.maxLength) {
      throw new ValueError(
        `array of ${n} elements is over the maximum of ${this.maxLength}`,
      );
    }
  }
  defaultValue(): E[] {
    return [];
  }
  override equals(a: E[], b: E[]): boolean {
    if (a.length !== b.length) return false;
    const of = this.of;
    for (let i = 0; i < a.length; i++) if (!of.equals(a[i], b[i])) return false;
    return true;
  }
  override clone(v: E[]): E[] {
    const of = this.of;
    if (!of.nested && of.clone === DataType.prototype.clone) return v.slice();
    const out = new Array<E>(v.length);
    for (let i = 0; i < v.length; i++) out[i] = of.clone(v[i]);
    return out;
  }
  write(w: ByteWriter, v: E[]): void {
    w.varint(v.length);
    const of = this.of;
    for (let i = 0; i < v.length; i++) of.write(w, v[i]);
  }
  read(r: ByteReader): E[] {
    const n = r.varint();
    if (n > r.remaining) {
      throw new RangeError(`array length ${n} exceeds the data left`);
    }
    this.checkLength(n);
    const out = new Array<E>(n);
    for (let i = 0; i < n; i++) out[i] = this.of.read(r);
    return out;
  }
  override toJSON(v: E[]): unknown {
    return v.map((e) => this.of.toJSON(e));
  }
}

/** One field of a FIXED_DICT. */
export interface DictField {
  readonly name: string;
  readonly type: DataType;
}

/** The value type of a FIXED_DICT with these field types. */
export type DictValue<F extends Record<string, DataType>> = {
  [K in keyof F]: ValueOf<F[K]>;
};

/**
 * FIXED_DICT {field: T}: a plain object with exactly the declared fields, in
 * declared order; a field's index is its position in that order.
 */
export class DictType<
  V extends Record<string, unknown> = Record<string, unknown>,
> extends DataType<V> {
  readonly kind = "FIXED_DICT" as const;
  override readonly nested = true;
  readonly fields: readonly DictField[];
  readonly fieldIndex: ReadonlyMap<string, number>;
  /** Kept from the definition (e.g. a KBEngine implementedBy converter); not used. */
  readonly metadata: Readonly<Record<string, unknown>>;

  constructor(
    fields: readonly DictField[],
    metadata: Record<string, unknown> = {},
  ) {
    super();
    this.fields = fields;
    this.fieldIndex = new Map(fields.map((f, i) => [f.name, i]));
    this.metadata = metadata;
  }
  get name(): string {
    return `FIXED_DICT{${this.fields.map((f) => `${f.name}: ${f.type.name}`).join(", ")}}`;
  }
  coerce(v: unknown): V {
    if (
      v === null || typeof v !== "object" || Array.isArray(v) ||
      v instanceof Uint8Array
    ) {
      throw new ValueError(`${show(v)} is a ${typeOf(v)}, expected FIXED_DICT`);
    }
    const src = v as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    const fields = this.fields;
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i];
      const fv = src[f.name];
      if (fv === undefined && !(f.name in src)) {
        throw new ValueError(
          `missing field '${f.name}' (fields: ${this.fieldNames()})`,
        );
      }
      try {
        out[f.name] = f.type.coerce(fv);
      } catch (e) {
        throw e instanceof ValueError ? e.at(`.${f.name}`) : e;
      }
    }
    for (const k in src) {
      if (!this.fieldIndex.has(k)) {
        throw new ValueError(
          `unknown field '${k}' (fields: ${this.fieldNames()})`,
        );
      }
    }
    return out as V;
  }
  /** The field names, comma-separated, for messages. */
  fieldNames(): string {
    return this.fields.map((f) => f.name).join(", ");
  }
  defaultValue(): V {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) out[f.name] = f.type.defaultValue();
    return out as V;
  }
  override equals(a: V, b: V): boolean {
    for (const f of this.fields) {
      if (!f.type.equals(a[f.name], b[f.name])) return false;
    }
    return true;
  }
  override clone(v: V): V {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) out[f.name] = f.type.clone(v[f.name]);
    return out as V;
  }
  write(w: ByteWriter, v: V): void {
    const fields = this.fields;
    for (let i = 0; i < fields.length; i++) {
      fields[i].type.write(w, v[fields[i].name]);
    }
  }
  read(r: ByteReader): V {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) out[f.name] = f.type.read(r);
    return out as V;
  }
  override toJSON(v: V): unknown {
    const out: Record<string, unknown> = {};
    for (const f of this.fields) out[f.name] = f.type.toJSON(v[f.name]);
    return out;
  }
}

/**
 * What a game registers for a user type: a binary encoder and decoder, a
 * default, and optionally a check (throw an Error saying what is wrong).
 * Values of user types are opaque: assign a new value to record a change.
 */
export interface UserTypeImpl<V = unknown> {
  /** Writes `v`. */
  encode(w: ByteWriter, v: V): void;
  /** Reads a value that encode wrote. */
  decode(r: ByteReader): V;
  /** The value a property of this type starts with. */
  defaultValue(): V;
  /** Checks a value set by a script and returns it; throws an Error saying what is wrong. */
  check?(v: unknown): V;
  /** Whether two values are the same (default: deep equality). */
  equals?(a: V, b: V): boolean;
  /** A copy of a value (default: the value itself, as values are assigned whole). */
  clone?(v: V): V;
  /** Parses a default written in a .def file. */
  parseDefault?(text: string): V;
}

/** A registered user type, by name. */
export class UserType<V = unknown> extends DataType<V> {
  readonly kind = "USER" as const;
  readonly userName: string;
  readonly impl: UserTypeImpl<V>;
  constructor(name: string, impl: UserTypeImpl<V>) {
    super();
    this.userName = name;
    this.impl = impl;
  }
  get name(): string {
    return `USER<${this.userName}>`;
  }
  coerce(v: unknown): V {
    if (!this.impl.check) return v as V;
    try {
      return this.impl.check(v);
    } catch (e) {
      if (e instanceof ValueError) throw e;
      throw new ValueError(
        `${show(v)} is not a valid ${this.userName}: ${errorText(e)}`,
        { cause: e },
      );
    }
  }
  defaultValue(): V {
    return this.impl.defaultValue();
  }
  override equals(a: V, b: V): boolean {
    return this.impl.equals ? this.impl.equals(a, b) : deepEqual(a, b);
  }
  override clone(v: V): V {
    return this.impl.clone ? this.impl.clone(v) : v;
  }
  write(w: ByteWriter, v: V): void {
    this.impl.encode(w, v);
  }
  read(r: ByteReader): V {
    return this.impl.decode(r);
  }
}

/**
 * A dynamically typed value (KBEngine PYTHON, PY_DICT, ...): anything msgpack
 * can encode; canonicalised through msgpack on set so replays are exact.
 */
export class DynamicType extends DataType<unknown> {
  readonly kind = "DYNAMIC" as const;
  /** The name the definition used (PYTHON, PY_DICT, ...). */
  readonly declaredAs: string;
  constructor(declaredAs = "DYNAMIC") {
    super();
    this.declaredAs = declaredAs;
  }
  get name(): string {
    return "DYNAMIC";
  }
  coerce(v: unknown): unknown {
    if (typeof v === "function" || typeof v === "symbol") {
      throw new ValueError(`a ${typeof v} cannot be stored in a DYNAMIC value`);
    }
    try {
      return mpDecode(mpEncode(v));
    } catch (e) {
      throw new ValueError(
        `${show(v)} cannot be encoded: ${errorText(e)}`,
        { cause: e },
      );
    }
  }
  defaultValue(): unknown {
    return null;
  }
  override equals(a: unknown, b: unknown): boolean {
    return deepEqual(a, b);
  }
  override clone(v: unknown): unknown {
    return v === null || typeof v !== "object" ? v : mpDecode(mpEncode(v));
  }
  write(w: ByteWriter, v: unknown): void {
    w.blob(mpEncode(v));
  }
  read(r: ByteReader): unknown {
    const bytes = r.raw(r.varint());
    // These bytes may come from a game client: bounded like every frame between processes, and no extensions.
    const bad = scanMsgpack(bytes, DYNAMIC_LIMITS);
    if (bad) throw new ValueError(`DYNAMIC value refused: ${bad}`);
    return mpDecode(bytes);
  }
}

/** Structural equality of plain data (arrays, objects, bytes, primitives). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (
    a === null || b === null || typeof a !== "object" || typeof b !== "object"
  ) {
    return false;
  }
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    if (
      !(a instanceof Uint8Array && b instanceof Uint8Array) ||
      a.length !== b.length
    ) {
      return false;
    }
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) {
      if (!deepEqual(a[i], bb[i])) return false;
    }
    return true;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  for (const k of ak) if (!(k in bo) || !deepEqual(ao[k], bo[k])) return false;
  return true;
}
