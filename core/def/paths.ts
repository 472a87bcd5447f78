/**
 * Change paths: one index per level below a property (array element index, or
 * FIXED_DICT field index in declared order), as BigWorld encodes them.
 */
import { ArrayType, DictType } from "./compound.ts";
import { PropertyDef } from "./model.ts";
import { DataType } from "./types.ts";

/** The type of the value a path leads to inside a property of type `root`. */
export function typeAtPath(
  root: DataType,
  path: readonly number[],
  depth = path.length,
): DataType {
  let t = root;
  for (let i = 0; i < depth; i++) {
    const k = path[i];
    if (t instanceof ArrayType) t = t.of;
    else if (t instanceof DictType) {
      const f = t.fields[k];
      if (!f) {
        throw new RangeError(
          `change path ${pathText(path)}: no field ${k} in ${t.name}`,
        );
      }
      t = f.type;
    } else {throw new RangeError(
        `change path ${pathText(path)} goes below ${t.name}, which has no parts`,
      );}
  }
  return t;
}

/** The value a path leads to (or its parent with `depth = path.length - 1`). */
export function valueAtPath(
  root: DataType,
  value: unknown,
  path: readonly number[],
  depth = path.length,
): unknown {
  let t = root;
  let v = value;
  for (let i = 0; i < depth; i++) {
    const k = path[i];
    if (t instanceof ArrayType) {
      const a = v as unknown[];
      if (!(k >= 0 && k < a.length)) {
        throw new RangeError(
          `change path ${pathText(path)}: index ${k} outside array of ${a.length}`,
        );
      }
      v = a[k];
      t = t.of;
    } else if (t instanceof DictType) {
      const f = t.fields[k];
      if (!f) {
        throw new RangeError(
          `change path ${pathText(path)}: no field ${k} in ${t.name}`,
        );
      }
      v = (v as Record<string, unknown>)[f.name];
      t = f.type;
    } else {throw new RangeError(
        `change path ${pathText(path)} goes below ${t.name}, which has no parts`,
      );}
  }
  return v;
}

/** `[2, 1]` as text, for messages. */
export function pathText(path: readonly number[]): string {
  return `[${path.join(", ")}]`;
}

/** A readable form of a property path: `inventory[2].count`. */
export function describePath(
  prop: PropertyDef,
  path: readonly number[],
): string {
  let s = prop.name;
  let t = prop.type;
  for (const k of path) {
    if (t instanceof ArrayType) {
      s += `[${k}]`;
      t = t.of;
    } else if (t instanceof DictType && t.fields[k]) {
      s += `.${t.fields[k].name}`;
      t = t.fields[k].type;
    } else {
      s += `[${k}]`;
    }
  }
  return s;
}
