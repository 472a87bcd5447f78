/**
 * Builds the EntityRegistry from entity specs: resolves parents, interfaces and
 * components, types, defaults, audiences, LoD labels, and assigns stable ids
 * and indices. Every problem is a DefError naming file:line, entity and member.
 */
import { UserTypeImpl } from "./compound.ts";
import { DefContext, DefError, DefWarning, ValueError } from "./errors.ts";
import { AUD, audienceMask, audiencesOf, type Flag, FLAGS, parseFlag } from "./flags.ts";
import { ArgDef, EntityRegistry, EntityType, LodLevel, MethodDef, MethodKind, PropertyDef } from "./model.ts";
import { EntitySpec, MethodSpec, PropertySpec } from "./schema.ts";
import { TypeTable } from "./type_table.ts";
import { DataType } from "./types.ts";

/** Everything a registry is built from. */
export interface RegistryInput {
  /** Entity types, in id order. */
  readonly entities: readonly EntitySpec[];
  /** Interfaces and component definitions that entity types include by name. */
  readonly interfaces?: readonly EntitySpec[];
  /** User types by name (an encoder/decoder pair, or a DataType). */
  readonly userTypes?: Readonly<Record<string, UserTypeImpl | DataType>>;
  /** Named type aliases (KBEngine types.xml, BigWorld alias.xml). */
  readonly aliases?: Readonly<Record<string, DataType>>;
  /** A type table to use instead of userTypes/aliases (the loader passes its own). */
  readonly typeTable?: TypeTable;
  /** Warnings gathered before building (the loader's). */
  readonly warnings?: readonly DefWarning[];
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface Member<S> {
  name: string;
  spec: S;
  declaredIn: string;
  component: string | null;
  persistent: boolean;
}

interface Gathered {
  properties: Member<PropertySpec>[];
  methods: Record<MethodKind, Member<MethodSpec>[]>;
  interfaces: string[];
}

/** Builds a registry; throws DefError on the first problem. */
export function createRegistry(input: RegistryInput): EntityRegistry {
  const table = input.typeTable ??
    new TypeTable(input.userTypes, input.aliases);
  const warnings: DefWarning[] = [...(input.warnings ?? [])];
  const entities = new Map<string, EntitySpec>();
  for (const e of input.entities) {
    if (entities.has(e.name)) {
      throw new DefError(`entity type '${e.name}' is defined twice`, {
        source: e.source,
        entity: e.name,
      });
    }
    entities.set(e.name, e);
  }
  const parts = new Map<string, EntitySpec>();
  for (const i of input.interfaces ?? []) parts.set(i.name, i);

  const built = new Map<string, EntityType>();
  const building: string[] = [];

  function build(spec: EntitySpec): EntityType {
    const done = built.get(spec.name);
    if (done) return done;
    if (building.includes(spec.name)) {
      const cycle = [...building.slice(building.indexOf(spec.name)), spec.name]
        .join(" -> ");
      const last = entities.get(building[building.length - 1])!;
      throw new DefError(`cycle of parents: ${cycle}`, {
        source: last.parentSource ?? last.source,
        entity: last.name,
      });
    }
    building.push(spec.name);
    let parent: EntityType | null = null;
    if (spec.parent !== undefined) {
      const ps = entities.get(spec.parent);
      if (!ps) {
        throw new DefError(
          `parent '${spec.parent}' does not exist (entity types: ${[...entities.keys()].join(", ")})`,
          { source: spec.parentSource ?? spec.source, entity: spec.name },
        );
      }
      parent = build(ps);
    }
    building.pop();
    const t = resolveType(
      spec,
      parent,
      entities,
      parts,
      table,
      warnings,
      input.entities.indexOf(spec),
    );
    built.set(spec.name, t);
    return t;
  }

  const types = input.entities.map(build);
  warnings.push(...table.warnings);
  return new EntityRegistry(types, dedupe(warnings));
}

function dedupe(ws: DefWarning[]): DefWarning[] {
  const seen = new Set<string>();
  return ws.filter((w) => {
    const k = `${w.source?.file}:${w.source?.line}:${w.entity}:${w.member}:${w.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function gather(
  spec: EntitySpec,
  parts: Map<string, EntitySpec>,
  out: Gathered,
  prefix: string,
  component: string | null,
  persistent: boolean,
  stack: string[],
): void {
  for (const name of spec.interfaces ?? []) {
    if (out.interfaces.includes(prefix + name)) continue;
    const part = parts.get(name);
    if (!part) {
      throw new DefError(
        `interface '${name}' does not exist (interfaces: ${[...parts.keys()].join(", ") || "none"})`,
        { source: spec.source, entity: spec.name },
      );
    }
    if (stack.includes(name)) {
      throw new DefError(
        `cycle of interfaces: ${[...stack, name].join(" -> ")}`,
        {
          source: part.source,
          entity: spec.name,
        },
      );
    }
    out.interfaces.push(prefix + name);
    gather(part, parts, out, prefix, component, persistent, [...stack, name]);
  }
  for (const [name, p] of Object.entries(spec.properties ?? {})) {
    out.properties.push({
      name: prefix + name,
      spec: p,
      declaredIn: spec.name,
      component,
      persistent: persistent && (p.persistent ?? false),
    });
  }
  const kinds: [
    MethodKind,
    Readonly<Record<string, MethodSpec>> | undefined,
  ][] = [
    ["cell", spec.cellMethods],
    ["base", spec.baseMethods],
    ["client", spec.clientMethods],
  ];
  for (const [kind, ms] of kinds) {
    for (const [name, m] of Object.entries(ms ?? {})) {
      out.methods[kind].push({
        name: prefix + name,
        spec: m,
        declaredIn: spec.name,
        component,
        persistent,
      });
    }
  }
  for (const [cname, c] of Object.entries(spec.components ?? {})) {
    const part = parts.get(c.type);
    if (!part) {
      throw new DefError(
        `component '${cname}' has type '${c.type}', which does not exist (components: ${
          [...parts.keys()].join(", ") || "none"
        })`,
        { source: c.source ?? spec.source, entity: spec.name, member: cname },
      );
    }
    gather(
      part,
      parts,
      out,
      `${prefix}${cname}.`,
      cname,
      persistent && (c.persistent ?? true),
      [
        ...stack,
        c.type,
      ],
    );
  }
}

function checkName(name: string, ctx: DefContext, what: string): void {
  const last = name.slice(name.lastIndexOf(".") + 1);
  if (!NAME_RE.test(last)) {
    throw new DefError(`${what} name '${last}' is not an identifier`, ctx);
  }
}

function resolveType(
  spec: EntitySpec,
  parent: EntityType | null,
  entities: Map<string, EntitySpec>,
  parts: Map<string, EntitySpec>,
  table: TypeTable,
  warnings: DefWarning[],
  id: number,
): EntityType {
  if (!NAME_RE.test(spec.name)) {
    throw new DefError(`entity type name '${spec.name}' is not an identifier`, {
      source: spec.source,
    });
  }
  const g: Gathered = {
    properties: [],
    methods: { cell: [], base: [], client: [] },
    interfaces: [],
  };
  // Parents first (their members keep their indices), then interfaces, own members, components.
  const chain: EntitySpec[] = [];
  for (let p = parent; p; p = p.parent) chain.unshift(entities.get(p.name)!);
  for (const s of [...chain, spec]) {
    gather(s, parts, g, "", null, true, [s.name]);
  }

  const lodLevels = resolveLods(spec, parent);
  const labels = new Map(lodLevels.map((l, i) => [l.label, i]));

  const seen = new Map<string, Member<PropertySpec>>();
  const properties: PropertyDef[] = [];
  let clientCount = 0;
  for (const m of g.properties) {
    const p = m.spec;
    const ctx: DefContext = {
      source: p.source,
      entity: spec.name,
      member: m.name,
    };
    checkName(m.name, ctx, "property");
    const prev = seen.get(m.name);
    if (prev) {
      throw new DefError(
        `duplicate property '${m.name}' (already defined in ${prev.declaredIn}${
          prev.spec.source ? ` at ${prev.spec.source.file}:${prev.spec.source.line}` : ""
        })`,
        ctx,
      );
    }
    seen.set(m.name, m);
    // Exactly as the Flag type spells them: the older .def spellings (FLAG_ALIASES) are read by def_file.ts only.
    const flags = typeof p.flags === "string" && (FLAGS as readonly string[]).includes(p.flags)
      ? p.flags as Flag
      : undefined;
    if (!flags) {
      const older = typeof p.flags === "string" ? parseFlag(p.flags) : undefined;
      throw new DefError(
        older
          ? `flag '${p.flags}' is written ${older} (the spelling '${p.flags}' is read from .def files only)`
          : `unknown flag '${p.flags}' (flags: ${FLAGS.join(", ")})`,
        ctx,
      );
    }
    const type = table.resolve(p.type, ctx);
    let def: unknown;
    try {
      def = p.default === undefined ? type.defaultValue() : type.coerce(p.default);
    } catch (e) {
      if (!(e instanceof ValueError)) throw e;
      throw new DefError(
        `default does not fit ${type.name}: ${e.message}`,
        ctx,
        { cause: e },
      );
    }
    const mask = audienceMask(flags, m.persistent);
    let detailLevel = lodLevels.length;
    let detailLabel: string | null = null;
    if (p.detailLevel !== undefined) {
      const idx = labels.get(p.detailLevel);
      if (idx !== undefined) {
        detailLevel = idx;
        detailLabel = p.detailLevel;
        if ((mask & AUD.otherClients) === 0) {
          warnings.push({
            ...ctx,
            message: `DetailLevel '${p.detailLevel}' has no effect: flag ${flags} is not seen by other clients`,
          });
        }
      } else if (lodLevels.length === 0) {
        warnings.push({
          ...ctx,
          message: `DetailLevel '${p.detailLevel}' ignored: ${spec.name} has no LoDLevels`,
        });
      } else {
        throw new DefError(
          `unknown DetailLevel '${p.detailLevel}' (LoD labels: ${[...labels.keys()].join(", ")})`,
          ctx,
        );
      }
    }
    const isClient = (mask & (AUD.ownClient | AUD.otherClients)) !== 0;
    properties.push({
      name: m.name,
      index: properties.length,
      clientIndex: isClient ? clientCount++ : -1,
      type,
      flags,
      audiences: audiencesOf(flags, m.persistent),
      mask,
      persistent: m.persistent,
      default: def,
      detailLevel,
      detailLabel,
      sendLatestOnly: p.sendLatestOnly ?? false,
      identifier: p.identifier ?? false,
      editable: p.editable ?? false,
      declaredIn: m.declaredIn,
      component: m.component,
      metadata: p.metadata ?? {},
      source: p.source,
    });
  }

  const methods = {} as Record<MethodKind, MethodDef[]>;
  for (const kind of ["cell", "base", "client"] as const) {
    const list: MethodDef[] = [];
    const names = new Map<string, Member<MethodSpec>>();
    for (const m of g.methods[kind]) {
      const ctx: DefContext = {
        source: m.spec.source,
        entity: spec.name,
        member: m.name,
      };
      checkName(m.name, ctx, "method");
      const prev = names.get(m.name);
      if (prev) {
        throw new DefError(
          `duplicate ${kind} method '${m.name}' (already defined in ${prev.declaredIn}${
            prev.spec.source ? ` at ${prev.spec.source.file}:${prev.spec.source.line}` : ""
          })`,
          ctx,
        );
      }
      names.set(m.name, m);
      list.push(resolveMethod(m, kind, list.length, ctx, table, warnings));
    }
    methods[kind] = list;
  }

  const anyMask = properties.reduce((a, p) => a | p.mask, 0);
  const hasBase = spec.hasBase ?? parent?.hasBase ??
    ((anyMask & AUD.base) !== 0 || methods.base.length > 0 ||
      spec.proxy === true);
  const hasCell = spec.hasCell ?? parent?.hasCell ??
    ((anyMask & AUD.cell) !== 0 || methods.cell.length > 0 ||
      spec.volatile !== undefined);
  const hasClient = spec.hasClient ?? parent?.hasClient ??
    (spec.proxy === true || clientCount > 0 || methods.client.length > 0);
  return new EntityType({
    id,
    name: spec.name,
    parent,
    interfaces: g.interfaces,
    components: Object.keys(spec.components ?? {}),
    proxy: spec.proxy ?? parent?.proxy ??
      (hasBase && hasClient && spec.hasClient === true),
    hasBase,
    hasCell,
    hasClient,
    volatile: spec.volatile ?? parent?.volatile ?? {},
    lodLevels,
    properties,
    cellMethods: methods.cell,
    baseMethods: methods.base,
    clientMethods: methods.client,
    metadata: spec.metadata ?? {},
    source: spec.source,
  });
}

function resolveMethod(
  m: Member<MethodSpec>,
  kind: MethodKind,
  index: number,
  ctx: DefContext,
  table: TypeTable,
  warnings: DefWarning[],
): MethodDef {
  const args: ArgDef[] = (m.spec.args ?? []).map((a, i) => {
    const named = typeof a === "object" && !(a instanceof DataType);
    const ref = named ? (a as { type: DataType | string }).type : a as DataType | string;
    try {
      return {
        name: named ? (a as { name: string }).name : null,
        type: table.resolve(ref, ctx),
      };
    } catch (e) {
      if (e instanceof DefError) {
        throw new DefError(`argument ${i + 1}: ${e.reason}`, ctx, { cause: e });
      }
      throw e;
    }
  });
  if (m.spec.exposed && kind === "client") {
    warnings.push({
      ...ctx,
      message: "Exposed has no meaning on a client method; ignored",
    });
  }
  const dd = m.spec.detailDistance;
  if (dd !== undefined && kind !== "client") {
    warnings.push({
      ...ctx,
      message: `DetailDistance has no meaning on a ${kind} method; ignored`,
    });
  }
  if (dd !== undefined && !(typeof dd === "number" && dd > 0)) {
    throw new DefError(
      `DetailDistance must be a positive number, got ${dd}`,
      ctx,
    );
  }
  return {
    name: m.name,
    kind,
    index,
    args,
    exposed: kind !== "client" && (m.spec.exposed ?? false),
    detailDistance: kind === "client" ? dd ?? null : null,
    declaredIn: m.declaredIn,
    component: m.component,
    metadata: m.spec.metadata ?? {},
    source: m.spec.source,
  };
}

function resolveLods(spec: EntitySpec, parent: EntityType | null): LodLevel[] {
  if (!spec.lodLevels) return parent ? [...parent.lodLevels] : [];
  const seen = new Set<string>();
  const levels = spec.lodLevels.map((l) => {
    const ctx: DefContext = {
      source: l.source ?? spec.source,
      entity: spec.name,
      member: `LoD ${l.label}`,
    };
    if (!l.label) throw new DefError("LoD level without a label", ctx);
    if (seen.has(l.label)) {
      throw new DefError(`duplicate LoD label '${l.label}'`, ctx);
    }
    seen.add(l.label);
    if (!(typeof l.distance === "number" && l.distance > 0)) {
      throw new DefError(
        `LoD distance must be a positive number, got ${l.distance}`,
        ctx,
      );
    }
    const h = l.hysteresis ?? 0;
    if (!(typeof h === "number" && h >= 0)) {
      throw new DefError(`LoD hysteresis must be a number >= 0, got ${h}`, ctx);
    }
    return { label: l.label, distance: l.distance, hysteresis: h };
  });
  return levels.sort((a, b) => a.distance - b.distance);
}
