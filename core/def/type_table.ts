/**
 * Resolves type names: registered user types and named aliases first, then the
 * built-in types and their older spellings, then dynamic (msgpack) types.
 */
import { BUILTIN_TYPES, DYNAMIC_TYPE_NAMES, TYPE_ALIASES } from "./builtins.ts";
import { DynamicType, UserType, UserTypeImpl } from "./compound.ts";
import { DefContext, DefError, DefWarning } from "./errors.ts";
import { TypeRef } from "./schema.ts";
import { DataType } from "./types.ts";

/** Named types visible to definitions, plus the warnings resolving them produced. */
export class TypeTable {
  private readonly named = new Map<string, DataType>();
  /** What resolving the types warned of. */
  readonly warnings: DefWarning[] = [];

  /** The table of built-in types, `userTypes` and `aliases`. */
  constructor(
    userTypes: Readonly<Record<string, UserTypeImpl | DataType>> = {},
    aliases: Readonly<Record<string, DataType>> = {},
  ) {
    for (const [name, impl] of Object.entries(userTypes)) {
      this.named.set(
        name,
        impl instanceof DataType ? impl : new UserType(name, impl),
      );
    }
    for (const [name, type] of Object.entries(aliases)) {
      this.named.set(name, type);
    }
  }

  /** Adds a named type (an alias from types.xml, or a user type). */
  define(name: string, type: DataType): void {
    this.named.set(name, type);
  }

  /** A registered user type or alias by exact name. */
  get(name: string): DataType | undefined {
    return this.named.get(name);
  }

  /** The names registered as user types or aliases. */
  names(): string[] {
    return [...this.named.keys()];
  }

  /** Resolves a name, or returns undefined when nothing has it. */
  lookup(name: string, ctx: DefContext = {}): DataType | undefined {
    const own = this.named.get(name);
    if (own) return own;
    const upper = name.toUpperCase();
    const builtin = BUILTIN_TYPES.get(upper) ??
      BUILTIN_TYPES.get(TYPE_ALIASES[upper] ?? "");
    if (builtin) return builtin;
    if (DYNAMIC_TYPE_NAMES.has(upper)) {
      this.warnings.push({
        ...ctx,
        message: `${upper} is dynamically typed; it is stored as a msgpack-encoded DYNAMIC value with no type checks`,
      });
      return new DynamicType(upper);
    }
    return undefined;
  }

  /** Resolves a TypeRef, throwing a DefError that names the unknown type. */
  resolve(ref: TypeRef, ctx: DefContext = {}): DataType {
    if (ref instanceof DataType) return ref;
    const t = this.lookup(ref.trim(), ctx);
    if (!t) {
      throw new DefError(
        `unknown type '${ref.trim()}' (built-in types: ${[...BUILTIN_TYPES.keys()].join(", ")}, ARRAY, FIXED_DICT${
          this.named.size ? `; named types: ${this.names().join(", ")}` : ""
        })`,
        ctx,
      );
    }
    return t;
  }
}
