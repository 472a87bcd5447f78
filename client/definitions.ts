/**
 * New definitions from the server after a game reload (docs/game.md#reloading-a-game): the client's registry adopts
 * them in place, and the entities it holds (the player and those in its AOI) get the properties that were added,
 * with their defaults. Value types are those the client already knows by name, or built-in ones.
 */
import {
  AUD,
  type Audience,
  type DataType,
  EntityRegistry,
  EntityType,
  type Flag,
  type LodLevel,
  type MethodDef,
  type MethodKind,
  type PropertyContainer,
  type PropertyDef,
  type RegistryJson,
  TypeTable,
} from "../core/def/mod.ts";
import type { VolatileSpec } from "../core/def/mod.ts";

/**
 * Builds the registry `json` describes, with value types taken from `current` by name (or the built-ins), and has
 * `current` adopt it. Throws naming the type or property it cannot build; `current` is then unchanged.
 */
export function adoptDefinitions(
  current: EntityRegistry,
  json: RegistryJson,
  containers: Iterable<PropertyContainer>,
): void {
  const known = new Map<string, DataType>();
  const table = new TypeTable();
  for (const t of current.types) {
    for (const p of t.properties) known.set(p.type.name, p.type);
    for (const m of [...t.cellMethods, ...t.baseMethods, ...t.clientMethods]) {
      for (const a of m.args) known.set(a.type.name, a.type);
    }
  }
  const typeOf = (name: string, what: string): DataType => {
    const t = known.get(name) ?? table.lookup(name);
    if (!t) throw new Error(`new definitions: ${what} has type ${name}, which this client does not know`);
    return t;
  };
  const built: EntityType[] = [];
  for (const t of json.types) {
    const lodLevels: LodLevel[] = t.lodLevels;
    const properties: PropertyDef[] = t.properties.map((p) => {
      const type = typeOf(p.type, `${t.name}.${p.name}`);
      const level = p.detailLevel === null ? lodLevels.length : lodLevels.findIndex((l) => l.label === p.detailLevel);
      return {
        name: p.name,
        index: p.index,
        clientIndex: p.clientIndex,
        type,
        flags: p.flags as Flag,
        audiences: p.audiences as Audience[],
        mask: (p.audiences as Audience[]).reduce((m, a) => m | AUD[a], 0),
        persistent: p.persistent,
        default: defaultOf(type, p.default),
        detailLevel: level < 0 ? lodLevels.length : level,
        detailLabel: p.detailLevel,
        sendLatestOnly: p.sendLatestOnly,
        identifier: p.identifier,
        editable: false,
        declaredIn: p.declaredIn,
        component: p.component,
        metadata: p.metadata,
      };
    });
    const methods = (kind: MethodKind): MethodDef[] =>
      t.methods[kind].map((m) => ({
        name: String(m.name),
        kind,
        index: Number(m.index),
        args: (m.args as string[]).map((a) => {
          const named = /^(\w+): (.+)$/.exec(a);
          return {
            name: named ? named[1] : null,
            type: typeOf(named ? named[2] : a, `${t.name}.${m.name}`),
          };
        }),
        exposed: m.exposed === true,
        detailDistance: typeof m.detailDistance === "number" ? m.detailDistance : null,
        declaredIn: t.name,
        component: typeof m.component === "string" ? m.component : null,
        metadata: (m.metadata ?? {}) as Record<string, unknown>,
      }));
    built.push(
      new EntityType({
        id: t.id,
        name: t.name,
        parent: built.find((b) => b.name === t.parent) ?? null,
        interfaces: t.interfaces,
        components: t.components,
        proxy: t.proxy,
        hasBase: t.hasBase,
        hasCell: t.hasCell,
        hasClient: t.hasClient,
        volatile: t.volatile as unknown as VolatileSpec,
        lodLevels,
        properties,
        cellMethods: methods("cell"),
        baseMethods: methods("base"),
        clientMethods: methods("client"),
        metadata: {},
      }),
    );
  }
  current.adopt(new EntityRegistry(built, []));
  for (const c of containers) c.upgrade();
}

/** A default as the description gives it (its JSON form), or the type's own when that form does not convert back. */
function defaultOf(type: DataType, json: unknown): unknown {
  try {
    return type.coerce(json);
  } catch {
    return type.defaultValue();
  }
}
