/**
 * The built-in types as values (`T.INT32`, `T.array(T.STRING)`, ...) and the
 * names, including older BigWorld/KBEngine spellings, that resolve to them.
 */
import { ArrayType, DictType, DictValue, DynamicType, UserType, UserTypeImpl } from "./compound.ts";
import { BlobType, BoolType, DataType, FloatType, IntType, StringType, Vector2Type, Vector3Type } from "./types.ts";

const INT8 = new IntType("INT8");
const INT16 = new IntType("INT16");
const INT32 = new IntType("INT32");
const INT64 = new IntType("INT64");
const UINT8 = new IntType("UINT8");
const UINT16 = new IntType("UINT16");
const UINT32 = new IntType("UINT32");
const UINT64 = new IntType("UINT64");
const FLOAT32 = new FloatType("FLOAT32");
const FLOAT64 = new FloatType("FLOAT64");
const BOOL = new BoolType();
const STRING = new StringType();
const BLOB = new BlobType();
const VECTOR2 = new Vector2Type();
const VECTOR3 = new Vector3Type();
const ENTITY_ID = new IntType("ENTITY_ID");

/** Type constructors for TypeScript definitions. */
export const T = {
  INT8,
  INT16,
  INT32,
  INT64,
  UINT8,
  UINT16,
  UINT32,
  UINT64,
  FLOAT32,
  FLOAT64,
  BOOL,
  STRING,
  BLOB,
  VECTOR2,
  VECTOR3,
  ENTITY_ID,
  /** STRING with a maximum length in UTF-8 bytes. */
  string(maxLength: number): StringType {
    return new StringType(maxLength);
  },
  /** BLOB with a maximum length in bytes. */
  blob(maxLength: number): BlobType {
    return new BlobType(maxLength);
  },
  /** ARRAY<of>, optionally limited to `maxLength` elements. */
  array<E>(of: DataType<E>, opts: { maxLength?: number } = {}): ArrayType<E> {
    return new ArrayType(of, opts.maxLength ?? null);
  },
  /** FIXED_DICT with these fields, in this order. */
  dict<F extends Record<string, DataType>>(fields: F): DictType<DictValue<F>> {
    return new DictType(
      Object.entries(fields).map(([name, type]) => ({ name, type })),
    );
  },
  /** A user type with its encoder and decoder. */
  user<V>(name: string, impl: UserTypeImpl<V>): UserType<V> {
    return new UserType(name, impl);
  },
  /** A dynamically typed, msgpack-encoded value. */
  dynamic(): DynamicType {
    return new DynamicType();
  },
} as const;

/** The built-in types by canonical name. */
export const BUILTIN_TYPES: ReadonlyMap<string, DataType> = new Map<
  string,
  DataType
>([
  ["INT8", INT8],
  ["INT16", INT16],
  ["INT32", INT32],
  ["INT64", INT64],
  ["UINT8", UINT8],
  ["UINT16", UINT16],
  ["UINT32", UINT32],
  ["UINT64", UINT64],
  ["FLOAT32", FLOAT32],
  ["FLOAT64", FLOAT64],
  ["BOOL", BOOL],
  ["STRING", STRING],
  ["BLOB", BLOB],
  ["VECTOR2", VECTOR2],
  ["VECTOR3", VECTOR3],
  ["ENTITY_ID", ENTITY_ID],
]);

/** Older or engine-specific spellings of built-in types. */
export const TYPE_ALIASES: Readonly<Record<string, string>> = {
  INT: "INT32",
  UINT: "UINT32",
  FLOAT: "FLOAT32",
  DOUBLE: "FLOAT64",
  UNICODE: "STRING",
  UNICODE_STRING: "STRING",
  OBJECT_ID: "ENTITY_ID",
  // An entity call / mailbox is carried as a reference to the entity: its id.
  ENTITYCALL: "ENTITY_ID",
  MAILBOX: "ENTITY_ID",
};

/** Names of dynamically typed values; they map to DYNAMIC (msgpack) with a warning. */
export const DYNAMIC_TYPE_NAMES: ReadonlySet<string> = new Set([
  "PYTHON",
  "PY_DICT",
  "PY_TUPLE",
  "PY_LIST",
  "DYNAMIC",
]);

/** Names of sequence containers that take an element type (`<of>`). */
export const ARRAY_TYPE_NAMES: ReadonlySet<string> = new Set([
  "ARRAY",
  "TUPLE",
  "LIST",
]);
