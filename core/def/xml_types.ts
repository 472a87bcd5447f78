/**
 * Type expressions and default values in .def / types.xml files: ARRAY <of>,
 * FIXED_DICT <Properties>, USER_TYPE <implementedBy>, named aliases.
 */
import { ARRAY_TYPE_NAMES } from "./builtins.ts";
import { ArrayType, DictField, DictType } from "./compound.ts";
import { DefContext, DefError, DefWarning } from "./errors.ts";
import { TypeTable } from "./type_table.ts";
import { DataType } from "./types.ts";
import { child, XmlElement } from "./xml.ts";

/** Shared state of one load: the type table and the warnings. */
export interface TypeEnv {
  readonly table: TypeTable;
  readonly warnings: DefWarning[];
  /** Resolves an alias defined later in types.xml (forward reference). */
  readonly resolveAlias?: (name: string) => DataType | undefined;
}

function ctxAt(el: XmlElement, ctx: DefContext): DefContext {
  return { ...ctx, source: el.source };
}

/** Parses a `<Type>` (or alias, `<of>`) element into a DataType. */
export function parseTypeElement(
  el: XmlElement,
  env: TypeEnv,
  ctx: DefContext,
): DataType {
  const c = ctxAt(el, ctx);
  const name = el.text.split(/\s+/)[0] ?? "";
  if (!name) throw new DefError(`empty type in <${el.name}>`, c);
  const upper = name.toUpperCase();
  if (ARRAY_TYPE_NAMES.has(upper)) {
    const of = child(el, "of");
    if (!of) {
      throw new DefError(`${name} needs an element type: <of> TYPE </of>`, c);
    }
    const max = child(el, "size");
    warnOthers(el, ["of", "size"], env, c);
    let maxLength: number | null = null;
    if (max) {
      maxLength = Number(max.text);
      if (!Number.isInteger(maxLength) || maxLength < 0) {
        throw new DefError(
          `array <size> must be a whole number, got '${max.text}'`,
          ctxAt(max, ctx),
        );
      }
    }
    return new ArrayType(parseTypeElement(of, env, ctx), maxLength);
  }
  if (upper === "FIXED_DICT") return parseDict(el, env, c);
  if (upper === "USER_TYPE") {
    const impl = child(el, "implementedBy");
    if (!impl || !impl.text) {
      throw new DefError(
        "USER_TYPE needs <implementedBy> naming a registered user type",
        c,
      );
    }
    const full = impl.text;
    const t = env.table.get(full) ?? env.table.get(full.split(".")[0]);
    if (!t) {
      throw new DefError(
        `USER_TYPE implemented by '${full}' has no registered user type; register one named '${
          full.split(".")[0]
        }' (registered: ${env.table.names().join(", ") || "none"})`,
        c,
      );
    }
    return t;
  }
  warnOthers(el, [], env, c);
  const t = env.table.get(name) ?? env.resolveAlias?.(name) ??
    env.table.lookup(name, c);
  if (!t) return env.table.resolve(name, c);
  return t;
}

function parseDict(el: XmlElement, env: TypeEnv, ctx: DefContext): DictType {
  const props = child(el, "Properties");
  const metadata: Record<string, unknown> = {};
  const impl = child(el, "implementedBy");
  if (impl) {
    metadata.implementedBy = impl.text;
    env.warnings.push({
      ...ctxAt(impl, ctx),
      message:
        `FIXED_DICT implementedBy '${impl.text}' (a Python converter) has no meaning here; kept as metadata, values are plain dicts`,
    });
  }
  const allowNone = child(el, "AllowNone");
  if (allowNone) {
    metadata.allowNone = allowNone.text;
    env.warnings.push({
      ...ctxAt(allowNone, ctx),
      message: "FIXED_DICT AllowNone kept as metadata",
    });
  }
  warnOthers(el, ["Properties", "implementedBy", "AllowNone"], env, ctx);
  const fields: DictField[] = [];
  for (const f of props?.children ?? []) {
    const fctx = {
      ...ctxAt(f, ctx),
      member: `${ctx.member ?? ""}${ctx.member ? "." : ""}${f.name}`,
    };
    if (fields.some((x) => x.name === f.name)) {
      throw new DefError(`duplicate FIXED_DICT field '${f.name}'`, fctx);
    }
    const typeEl = child(f, "Type");
    if (!typeEl) {
      throw new DefError(`FIXED_DICT field '${f.name}' has no <Type>`, fctx);
    }
    for (const extra of f.children) {
      if (extra.name === "Type") continue;
      env.warnings.push({
        ...ctxAt(extra, fctx),
        message: `<${extra.name}> on a FIXED_DICT field has no meaning here; ignored`,
      });
    }
    fields.push({ name: f.name, type: parseTypeElement(typeEl, env, fctx) });
  }
  if (fields.length === 0) {
    throw new DefError("FIXED_DICT has no fields (<Properties>)", ctx);
  }
  return new DictType(fields, metadata);
}

function warnOthers(
  el: XmlElement,
  known: string[],
  env: TypeEnv,
  ctx: DefContext,
): void {
  for (const c of el.children) {
    if (known.includes(c.name)) continue;
    env.warnings.push({
      ...ctxAt(c, ctx),
      message: `<${c.name}> inside a type has no meaning here; ignored`,
    });
  }
}

/** Parses a boolean written as true/false/1/0/yes/no. */
export function parseBool(el: XmlElement, ctx: DefContext): boolean {
  const t = el.text.toLowerCase();
  if (t === "" || t === "true" || t === "1" || t === "yes") return true;
  if (t === "false" || t === "0" || t === "no") return false;
  throw new DefError(
    `<${el.name}> must be true or false, got '${el.text}'`,
    ctxAt(el, ctx),
  );
}

/** Parses a number, or fails naming the element. */
export function parseNumber(el: XmlElement, ctx: DefContext): number {
  const n = Number(el.text);
  if (el.text === "" || !Number.isFinite(n)) {
    throw new DefError(
      `<${el.name}> must be a number, got '${el.text}'`,
      ctxAt(el, ctx),
    );
  }
  return n;
}

/**
 * Turns a `<Default>` element into a value for the type's check. Numbers,
 * booleans, base64 blobs, vectors as `1 2 3` or `(1,2,3)`, arrays as `<item>`
 * children or JSON, dicts as field children or JSON. Empty means the type's default.
 */
export function parseDefault(
  type: DataType,
  el: XmlElement,
  ctx: DefContext,
): unknown {
  const c = ctxAt(el, ctx);
  const text = el.text;
  const bad = (why: string): never => {
    throw new DefError(
      `default '${text}' does not fit ${type.name}: ${why}`,
      c,
    );
  };
  if (text === "" && el.children.length === 0) return undefined;
  switch (type.kind) {
    case "BOOL": {
      const t = text.toLowerCase();
      if (t === "true" || t === "1") return true;
      if (t === "false" || t === "0") return false;
      return bad("expected true or false");
    }
    case "STRING":
      return text;
    case "BLOB":
      try {
        return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
      } catch {
        return bad("expected base64");
      }
    case "VECTOR2":
    case "VECTOR3": {
      const parts = text.replace(/^\(|\)$/g, "").split(/[\s,]+/).filter(Boolean)
        .map(Number);
      if (parts.some((n) => !Number.isFinite(n))) {
        return bad("expected numbers");
      }
      return parts;
    }
    case "ARRAY": {
      const of = (type as ArrayType).of;
      const items = el.children.filter((x) => x.name === "item");
      if (items.length) {
        return items.map((i) => parseDefault(of, i, ctx) ?? of.defaultValue());
      }
      return json(text, bad);
    }
    case "FIXED_DICT": {
      const dict = type as DictType;
      if (el.children.length) {
        const out: Record<string, unknown> = {};
        for (const f of dict.fields) {
          const fe = child(el, f.name);
          out[f.name] = fe ? parseDefault(f.type, fe, ctx) ?? f.type.defaultValue() : f.type.defaultValue();
        }
        return out;
      }
      return json(text, bad);
    }
    case "DYNAMIC":
      try {
        return JSON.parse(text);
      } catch {
        return text;
      }
    case "USER": {
      const impl = (type as unknown as { impl: { parseDefault?: (t: string) => unknown } })
        .impl;
      if (impl.parseDefault) return impl.parseDefault(text);
      return bad("this user type has no parseDefault");
    }
    default: {
      const n = Number(text);
      if (!Number.isFinite(n)) return bad("not a number");
      return n;
    }
  }
}

function json(text: string, bad: (why: string) => never): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return bad("expected JSON or child elements");
  }
}
