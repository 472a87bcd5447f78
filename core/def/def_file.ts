/**
 * Parses one .def file (an entity type, interface or component) into an
 * EntitySpec. Unknown or meaningless elements are kept as metadata or ignored
 * with a warning naming file:line; wrong ones throw a DefError.
 */
import { DefContext, DefError, ValueError } from "./errors.ts";
import { DataType } from "./types.ts";
import { parseFlag } from "./flags.ts";
import {
  ArgSpec,
  ComponentSpec,
  EntitySpec,
  LodLevelSpec,
  MethodSpec,
  PropertySpec,
  VolatileLod,
  VolatileSpec,
} from "./schema.ts";
import { child, XmlElement } from "./xml.ts";
import { parseBool, parseDefault, parseNumber, parseTypeElement, TypeEnv } from "./xml_types.ts";

/** Attributes from entities.xml that complete a spec. */
export interface ListedInfo {
  readonly hasClient?: boolean;
  readonly hasCell?: boolean;
  readonly hasBase?: boolean;
  readonly metadata?: Record<string, unknown>;
}

const KEPT_PROPERTY_TAGS = [
  "Utype",
  "DatabaseLength",
  "Index",
  "IsReliable",
  "ExposedForReplay",
];
const KEPT_METHOD_TAGS = [
  "Utype",
  "ReturnValues",
  "ReplayExposureLevel",
  "IsReliable",
];

/** Parses the root element of a .def file. */
export function parseDefSpec(
  root: XmlElement,
  name: string,
  env: TypeEnv,
  info: ListedInfo,
): EntitySpec {
  const ctx: DefContext = { source: root.source, entity: name };
  const metadata: Record<string, unknown> = { ...(info.metadata ?? {}) };
  const spec: {
    -readonly [K in keyof EntitySpec]: EntitySpec[K];
  } = {
    name,
    source: root.source,
    metadata,
    hasClient: info.hasClient,
    hasCell: info.hasCell,
    hasBase: info.hasBase,
  };
  const interfaces: string[] = [];
  for (const el of root.children) {
    const c = { ...ctx, source: el.source };
    switch (el.name) {
      case "Parent":
        if (!el.text) throw new DefError("<Parent> is empty", c);
        spec.parent = el.text;
        spec.parentSource = el.source;
        break;
      case "Interfaces":
      case "Implements":
        for (const i of el.children) {
          if (i.name !== "Interface") {
            env.warnings.push({
              ...c,
              source: i.source,
              message: `<${i.name}> in <${el.name}> ignored`,
            });
          } else if (!i.text) {
            throw new DefError("<Interface> is empty", {
              ...c,
              source: i.source,
            });
          } else interfaces.push(i.text);
        }
        break;
      case "Components":
        spec.components = parseComponents(el, env, c);
        break;
      case "Volatile":
        spec.volatile = parseVolatile(el, env, c);
        break;
      case "LoDLevels":
        spec.lodLevels = parseLods(el, c);
        break;
      case "Properties":
        spec.properties = parseProperties(el, env, ctx);
        break;
      case "CellMethods":
        spec.cellMethods = parseMethods(el, env, ctx, "cell");
        break;
      case "BaseMethods":
        spec.baseMethods = parseMethods(el, env, ctx, "base");
        break;
      case "ClientMethods":
        spec.clientMethods = parseMethods(el, env, ctx, "client");
        break;
      default:
        metadata[el.name] = el.text;
        env.warnings.push({
          ...c,
          message: `section <${el.name}> has no meaning here; kept as metadata`,
        });
    }
  }
  if (interfaces.length) spec.interfaces = interfaces;
  return spec;
}

function parseComponents(
  el: XmlElement,
  env: TypeEnv,
  ctx: DefContext,
): Record<string, ComponentSpec> {
  const out: Record<string, ComponentSpec> = {};
  for (const c of el.children) {
    const cc = { ...ctx, source: c.source, member: c.name };
    if (out[c.name]) throw new DefError(`duplicate component '${c.name}'`, cc);
    const type = child(c, "Type");
    if (!type?.text) {
      throw new DefError(`component '${c.name}' has no <Type>`, cc);
    }
    const pers = child(c, "Persistent");
    for (const x of c.children) {
      if (x.name !== "Type" && x.name !== "Persistent") {
        env.warnings.push({
          ...cc,
          source: x.source,
          message: `<${x.name}> on a component ignored`,
        });
      }
    }
    out[c.name] = {
      type: type.text,
      persistent: pers ? parseBool(pers, cc) : true,
      source: c.source,
    };
  }
  return out;
}

function parseVolatile(
  el: XmlElement,
  env: TypeEnv,
  ctx: DefContext,
): VolatileSpec {
  const out: { -readonly [K in keyof VolatileSpec]: VolatileSpec[K] } = {};
  for (const c of el.children) {
    const cc = { ...ctx, source: c.source, member: `Volatile.${c.name}` };
    if (
      c.name === "position" || c.name === "yaw" || c.name === "pitch" ||
      c.name === "roll"
    ) {
      let lod: VolatileLod = true;
      if (c.text) {
        lod = parseNumber(c, cc);
        if (lod <= 0) {
          throw new DefError(
            `volatile ${c.name} distance must be positive`,
            cc,
          );
        }
      }
      out[c.name] = lod;
    } else if (c.name === "optimized") {
      out.optimized = parseBool(c, cc);
      env.warnings.push({
        ...cc,
        message: "<optimized> (KBEngine: skip Y on the ground) is kept as metadata; positions are sent in full",
      });
    } else {
      env.warnings.push({
        ...cc,
        message: `<${c.name}> in <Volatile> has no meaning here; ignored`,
      });
    }
  }
  return out;
}

function parseLods(el: XmlElement, ctx: DefContext): LodLevelSpec[] {
  return el.children.map((lv) => {
    const c = { ...ctx, source: lv.source, member: "LoDLevels" };
    if (lv.name !== "level") {
      throw new DefError(`<${lv.name}> in <LoDLevels>: expected <level>`, c);
    }
    const label = child(lv, "label");
    const hyst = child(lv, "hyst") ?? child(lv, "hysteresis");
    if (!label?.text) throw new DefError("LoD <level> has no <label>", c);
    return {
      label: label.text,
      distance: parseNumber(lv, c),
      hysteresis: hyst ? parseNumber(hyst, c) : 0,
      source: lv.source,
    };
  });
}

function parseProperties(
  el: XmlElement,
  env: TypeEnv,
  ctx: DefContext,
): Record<string, PropertySpec> {
  const out: Record<string, PropertySpec> = {};
  for (const p of el.children) {
    const c: DefContext = { ...ctx, source: p.source, member: p.name };
    if (Object.hasOwn(out, p.name)) {
      throw new DefError(`duplicate property '${p.name}'`, c);
    }
    const typeEl = child(p, "Type");
    if (!typeEl) throw new DefError("property has no <Type>", c);
    const flagsEl = child(p, "Flags");
    if (!flagsEl) throw new DefError("property has no <Flags>", c);
    const flags = parseFlag(flagsEl.text);
    if (!flags) {
      throw new DefError(
        `unknown flag '${flagsEl.text}' (flags: BASE, BASE_AND_CLIENT, CELL_PRIVATE, CELL_PUBLIC, CELL_PUBLIC_AND_OWN, OWN_CLIENT, OTHER_CLIENTS, ALL_CLIENTS)`,
        { ...c, source: flagsEl.source },
      );
    }
    const type = parseTypeElement(typeEl, env, c);
    const metadata: Record<string, unknown> = {};
    const spec: { -readonly [K in keyof PropertySpec]: PropertySpec[K] } = {
      type,
      flags,
      source: p.source,
      metadata,
    };
    for (const x of p.children) {
      const xc = { ...c, source: x.source };
      switch (x.name) {
        case "Type":
        case "Flags":
          break;
        case "Default":
          spec.default = parseDefault(type, x, c);
          checkDefault(type, spec.default, xc);
          break;
        case "Persistent":
          spec.persistent = parseBool(x, xc);
          break;
        case "Editable":
          spec.editable = parseBool(x, xc);
          break;
        case "Identifier":
          spec.identifier = parseBool(x, xc);
          break;
        case "SendLatestOnly":
          spec.sendLatestOnly = parseBool(x, xc);
          break;
        case "DetailLevel":
          if (!x.text) throw new DefError("<DetailLevel> is empty", xc);
          spec.detailLevel = x.text;
          break;
        default:
          metadata[x.name] = x.text;
          env.warnings.push({
            ...xc,
            message: KEPT_PROPERTY_TAGS.includes(x.name)
              ? `<${x.name}> has no meaning here; kept as metadata`
              : `unknown property element <${x.name}>; kept as metadata`,
          });
      }
    }
    out[p.name] = spec;
  }
  return out;
}

function parseMethods(
  el: XmlElement,
  env: TypeEnv,
  ctx: DefContext,
  kind: "cell" | "base" | "client",
): Record<string, MethodSpec> {
  const out: Record<string, MethodSpec> = {};
  for (const m of el.children) {
    const c: DefContext = { ...ctx, source: m.source, member: m.name };
    if (Object.hasOwn(out, m.name)) {
      throw new DefError(`duplicate ${kind} method '${m.name}'`, c);
    }
    const args: ArgSpec[] = [];
    const metadata: Record<string, unknown> = {};
    const spec: { -readonly [K in keyof MethodSpec]: MethodSpec[K] } = {
      args,
      source: m.source,
      metadata,
    };
    for (const x of m.children) {
      const xc = { ...c, source: x.source };
      switch (x.name) {
        case "Arg":
          args.push(argType(x, env, c, args.length));
          break;
        case "Args":
          for (const a of x.children) {
            args.push({ name: a.name, type: argType(a, env, c, args.length) });
          }
          break;
        case "Exposed":
          spec.exposed = true;
          if (x.text) metadata.exposed = x.text;
          break;
        case "DetailDistance":
          spec.detailDistance = parseNumber(x, xc);
          break;
        default:
          metadata[x.name] = x.text;
          env.warnings.push({
            ...xc,
            message: KEPT_METHOD_TAGS.includes(x.name)
              ? `<${x.name}> has no meaning here; kept as metadata`
              : `unknown method element <${x.name}>; kept as metadata`,
          });
      }
    }
    out[m.name] = spec;
  }
  return out;
}

function checkDefault(type: DataType, v: unknown, ctx: DefContext): void {
  if (v === undefined) return;
  try {
    type.coerce(v);
  } catch (e) {
    if (e instanceof ValueError) {
      throw new DefError(`default does not fit ${type.name}: ${e.message}`, ctx, { cause: e });
    }
    throw e;
  }
}

function argType(x: XmlElement, env: TypeEnv, ctx: DefContext, i: number) {
  try {
    return parseTypeElement(x, env, ctx);
  } catch (e) {
    if (e instanceof DefError) {
      throw new DefError(`argument ${i + 1}: ${e.reason}`, {
        ...ctx,
        source: e.source ?? x.source,
      }, { cause: e });
    }
    throw e;
  }
}
