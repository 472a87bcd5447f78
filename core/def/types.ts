/**
 * Property value types: each checks and canonicalises a value at the moment it
 * is set, compares, copies, gives a default, and reads/writes the compact
 * binary form. INT64/UINT64 values are numbers within the safe-integer range.
 */
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import { show, ValueError } from "./errors.ts";

/** The kind of a type, one per built-in type plus ARRAY, FIXED_DICT, USER and DYNAMIC. */
export type TypeKind =
  | "INT8"
  | "INT16"
  | "INT32"
  | "INT64"
  | "UINT8"
  | "UINT16"
  | "UINT32"
  | "UINT64"
  | "FLOAT32"
  | "FLOAT64"
  | "BOOL"
  | "STRING"
  | "BLOB"
  | "VECTOR2"
  | "VECTOR3"
  | "ENTITY_ID"
  | "ARRAY"
  | "FIXED_DICT"
  | "USER"
  | "DYNAMIC";

/** A VECTOR2 value (frozen once stored). */
export interface Vector2 {
  readonly x: number;
  readonly y: number;
}

/** A VECTOR3 value (frozen once stored). */
export interface Vector3 {
  readonly x: number;
  readonly y: number;
  readonly z: number;
}

/** A property value type. `V` is the TypeScript type of its values. */
export abstract class DataType<V = unknown> {
  /** Phantom member carrying the value type for inference; never set. */
  declare readonly _value: V;
  /** Which kind of type it is (INT32, ARRAY, FIXED_DICT, ...). */
  abstract readonly kind: TypeKind;
  /** True for ARRAY and FIXED_DICT, whose insides are tracked for change paths. */
  readonly nested: boolean = false;
  /** Canonical text form, e.g. `ARRAY<INT32>`. */
  abstract get name(): string;
  /** Checks `v` and returns the value to store (a fresh copy for containers); throws ValueError. */
  abstract coerce(v: unknown): V;
  /** The value a property of this type starts with when no default is given. */
  abstract defaultValue(): V;
  /** Deep value equality (a set to an equal value records nothing). */
  equals(a: V, b: V): boolean {
    return Object.is(a, b);
  }
  /** A deep copy (immutable values are returned as they are). */
  clone(v: V): V {
    return v;
  }
  /** Writes the compact binary form. */
  abstract write(w: ByteWriter, v: V): void;
  /** Reads the compact binary form. */
  abstract read(r: ByteReader): V;
  /** A JSON-friendly form of a value, for printing defaults. */
  toJSON(v: V): unknown {
    return v;
  }
  /** The canonical name, so types print well in templates. */
  toString(): string {
    return this.name;
  }
}

/** The TypeScript value type of a DataType. */
export type ValueOf<T> = T extends DataType<infer V> ? V : unknown;

type IntKind =
  | "INT8"
  | "INT16"
  | "INT32"
  | "INT64"
  | "UINT8"
  | "UINT16"
  | "UINT32"
  | "UINT64"
  | "ENTITY_ID";

/** Fixed-width integers; 64-bit ones are limited to the safe-integer range. */
export class IntType extends DataType<number> {
  readonly kind: IntKind;
  readonly min: number;
  readonly max: number;
  private readonly code: number;

  constructor(kind: IntKind) {
    super();
    this.kind = kind;
    const bits = kind === "ENTITY_ID" ? 32 : Number(kind.replace(/\D/g, ""));
    const signed = !kind.startsWith("U");
    if (bits === 64) {
      this.min = signed ? -Number.MAX_SAFE_INTEGER : 0;
      this.max = Number.MAX_SAFE_INTEGER;
    } else {
      this.min = signed ? -(2 ** (bits - 1)) : 0;
      this.max = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
    }
    this.code = (bits >> 2) + (signed ? 1 : 0);
  }
  get name(): string {
    return this.kind;
  }
  coerce(v: unknown): number {
    if (typeof v === "number") {
      if (Number.isInteger(v) && v >= this.min && v <= this.max) return v;
      if (!Number.isInteger(v)) {
        throw new ValueError(`${show(v)} is not an integer (${this.kind})`);
      }
    } else if (typeof v === "bigint") {
      const n = Number(v);
      if (BigInt(n) === v && n >= this.min && n <= this.max) return n;
    } else {
      throw new ValueError(
        `${show(v)} is a ${typeOf(v)}, expected ${this.kind}`,
      );
    }
    throw new ValueError(
      `${show(v)} is out of range for ${this.kind} (${this.min}..${this.max})`,
    );
  }
  defaultValue(): number {
    return 0;
  }
  write(w: ByteWriter, v: number): void {
    switch (this.code) {
      case 3:
        return w.i8(v);
      case 2:
        return w.u8(v);
      case 5:
        return w.i16(v);
      case 4:
        return w.u16(v);
      case 9:
        return w.i32(v);
      case 8:
        return w.u32(v);
      case 17:
        return w.i64(v);
      default:
        return w.u64(v);
    }
  }
  read(r: ByteReader): number {
    switch (this.code) {
      case 3:
        return r.i8();
      case 2:
        return r.u8();
      case 5:
        return r.i16();
      case 4:
        return r.u16();
      case 9:
        return r.i32();
      case 8:
        return r.u32();
      case 17:
        return r.i64();
      default:
        return r.u64();
    }
  }
}

const FLT_MAX = 3.4028234663852886e38;

/** FLOAT32 (stored rounded to float32, so replays are exact) and FLOAT64. */
export class FloatType extends DataType<number> {
  readonly kind: "FLOAT32" | "FLOAT64";
  constructor(kind: "FLOAT32" | "FLOAT64") {
    super();
    this.kind = kind;
  }
  get name(): string {
    return this.kind;
  }
  coerce(v: unknown): number {
    if (typeof v !== "number") {
      throw new ValueError(
        `${show(v)} is a ${typeOf(v)}, expected ${this.kind}`,
      );
    }
    if (this.kind === "FLOAT64") return v;
    if (Number.isFinite(v) && Math.abs(v) > FLT_MAX) {
      throw new ValueError(`${v} is out of range for FLOAT32`);
    }
    return Math.fround(v);
  }
  defaultValue(): number {
    return 0;
  }
  write(w: ByteWriter, v: number): void {
    if (this.kind === "FLOAT32") w.f32(v);
    else w.f64(v);
  }
  read(r: ByteReader): number {
    return this.kind === "FLOAT32" ? r.f32() : r.f64();
  }
}

/** BOOL: true or false, one byte. */
export class BoolType extends DataType<boolean> {
  readonly kind = "BOOL" as const;
  get name(): string {
    return "BOOL";
  }
  coerce(v: unknown): boolean {
    if (typeof v === "boolean") return v;
    throw new ValueError(`${show(v)} is a ${typeOf(v)}, expected BOOL`);
  }
  defaultValue(): boolean {
    return false;
  }
  write(w: ByteWriter, v: boolean): void {
    w.u8(v ? 1 : 0);
  }
  read(r: ByteReader): boolean {
    return r.u8() !== 0;
  }
}

/** Length of a string in UTF-8 bytes. */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** STRING: UTF-8 text; `maxLength`, when declared, counts UTF-8 bytes. */
export class StringType extends DataType<string> {
  readonly kind = "STRING" as const;
  readonly maxLength: number | null;
  constructor(maxLength: number | null = null) {
    super();
    this.maxLength = maxLength;
  }
  get name(): string {
    return this.maxLength === null ? "STRING" : `STRING(${this.maxLength})`;
  }
  coerce(v: unknown): string {
    if (typeof v !== "string") {
      throw new ValueError(`${show(v)} is a ${typeOf(v)}, expected STRING`);
    }
    const max = this.maxLength;
    // Only count bytes when the string could be too long (3 bytes per unit at most).
    if (max !== null && v.length * 3 > max && utf8Length(v) > max) {
      throw new ValueError(
        `${show(v)} is ${utf8Length(v)} UTF-8 bytes, over the maximum of ${max}`,
      );
    }
    return v;
  }
  defaultValue(): string {
    return "";
  }
  write(w: ByteWriter, v: string): void {
    w.string(v);
  }
  read(r: ByteReader): string {
    return r.string();
  }
}

/** BLOB: bytes, copied on set (mutating a stored blob is not tracked). */
export class BlobType extends DataType<Uint8Array> {
  readonly kind = "BLOB" as const;
  readonly maxLength: number | null;
  constructor(maxLength: number | null = null) {
    super();
    this.maxLength = maxLength;
  }
  get name(): string {
    return this.maxLength === null ? "BLOB" : `BLOB(${this.maxLength})`;
  }
  coerce(v: unknown): Uint8Array {
    if (!(v instanceof Uint8Array)) {
      throw new ValueError(
        `${show(v)} is a ${typeOf(v)}, expected BLOB (Uint8Array)`,
      );
    }
    if (this.maxLength !== null && v.length > this.maxLength) {
      throw new ValueError(
        `blob of ${v.length} bytes is over the maximum of ${this.maxLength}`,
      );
    }
    return v.slice();
  }
  defaultValue(): Uint8Array {
    return new Uint8Array(0);
  }
  override equals(a: Uint8Array, b: Uint8Array): boolean {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  override clone(v: Uint8Array): Uint8Array {
    return v.slice();
  }
  write(w: ByteWriter, v: Uint8Array): void {
    w.blob(v);
  }
  read(r: ByteReader): Uint8Array {
    return r.blob();
  }
  override toJSON(v: Uint8Array): unknown {
    return btoa(String.fromCharCode(...v));
  }
}

function component(v: unknown, axis: string, kind: string): number {
  if (typeof v !== "number") {
    throw new ValueError(`${axis} is ${show(v)}, expected a number (${kind})`);
  }
  if (Number.isFinite(v) && Math.abs(v) > FLT_MAX) {
    throw new ValueError(`${axis} = ${v} is out of float32 range (${kind})`);
  }
  return Math.fround(v);
}

/** VECTOR2 `{x, y}` of float32; accepts `[x, y]`; stored frozen. */
export class Vector2Type extends DataType<Vector2> {
  readonly kind = "VECTOR2" as const;
  get name(): string {
    return "VECTOR2";
  }
  coerce(v: unknown): Vector2 {
    if (Array.isArray(v) && v.length === 2) {
      return Object.freeze({
        x: component(v[0], "x", "VECTOR2"),
        y: component(v[1], "y", "VECTOR2"),
      });
    }
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const o = v as { x?: unknown; y?: unknown };
      return Object.freeze({
        x: component(o.x, "x", "VECTOR2"),
        y: component(o.y, "y", "VECTOR2"),
      });
    }
    throw new ValueError(`${show(v)} is not a VECTOR2 ({x, y} or [x, y])`);
  }
  defaultValue(): Vector2 {
    return Object.freeze({ x: 0, y: 0 });
  }
  override equals(a: Vector2, b: Vector2): boolean {
    return Object.is(a.x, b.x) && Object.is(a.y, b.y);
  }
  write(w: ByteWriter, v: Vector2): void {
    w.f32(v.x);
    w.f32(v.y);
  }
  read(r: ByteReader): Vector2 {
    const x = r.f32();
    return Object.freeze({ x, y: r.f32() });
  }
}

/** VECTOR3 `{x, y, z}` of float32; accepts `[x, y, z]`; stored frozen. */
export class Vector3Type extends DataType<Vector3> {
  readonly kind = "VECTOR3" as const;
  get name(): string {
    return "VECTOR3";
  }
  coerce(v: unknown): Vector3 {
    if (Array.isArray(v) && v.length === 3) {
      return Object.freeze({
        x: component(v[0], "x", "VECTOR3"),
        y: component(v[1], "y", "VECTOR3"),
        z: component(v[2], "z", "VECTOR3"),
      });
    }
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const o = v as { x?: unknown; y?: unknown; z?: unknown };
      return Object.freeze({
        x: component(o.x, "x", "VECTOR3"),
        y: component(o.y, "y", "VECTOR3"),
        z: component(o.z, "z", "VECTOR3"),
      });
    }
    throw new ValueError(
      `${show(v)} is not a VECTOR3 ({x, y, z} or [x, y, z])`,
    );
  }
  defaultValue(): Vector3 {
    return Object.freeze({ x: 0, y: 0, z: 0 });
  }
  override equals(a: Vector3, b: Vector3): boolean {
    return Object.is(a.x, b.x) && Object.is(a.y, b.y) && Object.is(a.z, b.z);
  }
  write(w: ByteWriter, v: Vector3): void {
    w.f32(v.x);
    w.f32(v.y);
    w.f32(v.z);
  }
  read(r: ByteReader): Vector3 {
    const x = r.f32();
    const y = r.f32();
    return Object.freeze({ x, y, z: r.f32() });
  }
}

/** A short name for the JavaScript type of a value, for messages. */
export function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (v instanceof Uint8Array) return "Uint8Array";
  return typeof v;
}
