/**
 * The resolved definition model that every role and the client SDK use: entity
 * types with stable ids, properties and methods with stable indices, audiences.
 */
import { errorText } from "../errors.ts";
import { DefWarning, SourcePos } from "./errors.ts";
import { AUD, Audience, AUDIENCES, Flag } from "./flags.ts";
import { VolatileSpec } from "./schema.ts";
import { DataType } from "./types.ts";

/** A resolved property of an entity type. */
export interface PropertyDef {
  /** Its name. */
  readonly name: string;
  /** Stable index within the entity type (parents, then interfaces, then own, then components). */
  readonly index: number;
  /** Index among the properties any client may see, or -1 (used by the client protocol). */
  readonly clientIndex: number;
  /** Its value type. */
  readonly type: DataType;
  /** Who has and sees it. */
  readonly flags: Flag;
  /** The parts and clients that have it, from its flags. */
  readonly audiences: readonly Audience[];
  /** The audiences as bits (see AUD). */
  readonly mask: number;
  /** Saved to the database with its entity. */
  readonly persistent: boolean;
  /** The canonical default value (copy it before mutating). */
  readonly default: unknown;
  /** Index into the type's lodLevels; lodLevels.length means "anywhere in the AoI". */
  readonly detailLevel: number;
  /** The detail level's label, or null when clients see it anywhere in the AoI. */
  readonly detailLabel: string | null;
  /** Only the newest change is kept in the history. */
  readonly sendLatestOnly: boolean;
  /** It names the entity in the database. */
  readonly identifier: boolean;
  /** Tools may edit it. */
  readonly editable: boolean;
  /** The entity type, interface or component that declared it. */
  readonly declaredIn: string;
  /** The component (named part) it belongs to, or null. */
  readonly component: string | null;
  /** What the definition said that has no meaning here. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** A method argument. */
export interface ArgDef {
  /** Its name, or null when the definition gave none. */
  readonly name: string | null;
  /** Its value type. */
  readonly type: DataType;
}

/** Which part of an entity a method runs on. */
export type MethodKind = "cell" | "base" | "client";

/** A resolved cell, base or client method. */
export interface MethodDef {
  /** Its name. */
  readonly name: string;
  /** The part it runs on. */
  readonly kind: MethodKind;
  /** Stable index among the type's methods of this kind. */
  readonly index: number;
  /** Its arguments, in order (cell methods get the caller's id before them in a script). */
  readonly args: readonly ArgDef[];
  /** A client may call it. */
  readonly exposed: boolean;
  /** Client methods: the call reaches clients within this distance; null = all. */
  readonly detailDistance: number | null;
  /** The entity type, interface or component that declared it. */
  readonly declaredIn: string;
  /** The component (named part) it belongs to, or null. */
  readonly component: string | null;
  /** What the definition said that has no meaning here. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** A resolved LoD level; levels are sorted by distance, nearest first. */
export interface LodLevel {
  /** Its name. */
  readonly label: string;
  /** Within this distance (m). */
  readonly distance: number;
  /** How far past `distance` a client leaves it (m). */
  readonly hysteresis: number;
}

/** A resolved entity type. */
export class EntityType {
  /** Its stable id: its place in the registry. */
  readonly id: number;
  /** Its name. */
  readonly name: string;
  /** The type it extends, or null. */
  readonly parent: EntityType | null;
  /** The interfaces it includes. */
  readonly interfaces: readonly string[];
  /** The names of its components (named parts). */
  readonly components: readonly string[];
  /** A base entity with a client (a player). */
  readonly proxy: boolean;
  /** It has a base part. */
  readonly hasBase: boolean;
  /** It has a cell part. */
  readonly hasCell: boolean;
  /** It has a client part. */
  readonly hasClient: boolean;
  /**
   * Whether clients ever see entities of this type (BigWorld's canBeOnClient): it has a client part with properties
   * or methods a client knows. Others still take part in the cell's range queries and triggers, never in a witness.
   */
  readonly canBeOnClient: boolean;
  /** Which of position and direction clients get. */
  readonly volatile: VolatileSpec;
  /** Its detail levels, nearest first. */
  readonly lodLevels: readonly LodLevel[];
  /** Every property, by index. */
  readonly properties: readonly PropertyDef[];
  /** Properties by clientIndex. */
  readonly clientProperties: readonly PropertyDef[];
  /** Cell methods, by index. */
  readonly cellMethods: readonly MethodDef[];
  /** Base methods, by index. */
  readonly baseMethods: readonly MethodDef[];
  /** Client methods, by index. */
  readonly clientMethods: readonly MethodDef[];
  /** What the definition said that has no meaning here. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
  private readonly byName: ReadonlyMap<string, PropertyDef>;
  private readonly methodsByName: Readonly<
    Record<MethodKind, ReadonlyMap<string, MethodDef>>
  >;
  private readonly byAudience: Readonly<
    Record<Audience, readonly PropertyDef[]>
  >;

  /** Built by createRegistry; games do not make these themselves. */
  constructor(init: {
    id: number;
    name: string;
    parent: EntityType | null;
    interfaces: string[];
    components: string[];
    proxy: boolean;
    hasBase: boolean;
    hasCell: boolean;
    hasClient: boolean;
    volatile: VolatileSpec;
    lodLevels: LodLevel[];
    properties: PropertyDef[];
    cellMethods: MethodDef[];
    baseMethods: MethodDef[];
    clientMethods: MethodDef[];
    metadata: Record<string, unknown>;
    source?: SourcePos;
  }) {
    this.id = init.id;
    this.name = init.name;
    this.parent = init.parent;
    this.interfaces = init.interfaces;
    this.components = init.components;
    this.proxy = init.proxy;
    this.hasBase = init.hasBase;
    this.hasCell = init.hasCell;
    this.hasClient = init.hasClient;
    this.volatile = init.volatile;
    this.lodLevels = init.lodLevels;
    this.properties = init.properties;
    this.clientProperties = init.properties.filter((p) => p.clientIndex >= 0);
    this.cellMethods = init.cellMethods;
    this.baseMethods = init.baseMethods;
    this.clientMethods = init.clientMethods;
    this.canBeOnClient = init.hasClient && (this.clientProperties.length > 0 || init.clientMethods.length > 0);
    this.metadata = init.metadata;
    this.source = init.source;
    this.byName = new Map(init.properties.map((p) => [p.name, p]));
    const index = (ms: MethodDef[]) => new Map(ms.map((m) => [m.name, m]));
    this.methodsByName = {
      cell: index(init.cellMethods),
      base: index(init.baseMethods),
      client: index(init.clientMethods),
    };
    const by = {} as Record<Audience, PropertyDef[]>;
    for (const a of AUDIENCES) {
      by[a] = init.properties.filter((p) => (p.mask & AUD[a]) !== 0);
    }
    this.byAudience = by;
  }

  /** A property by name, or undefined. */
  findProperty(name: string): PropertyDef | undefined {
    return this.byName.get(name);
  }

  /** A property by name; throws naming the type when it has none. */
  property(name: string): PropertyDef {
    const p = this.byName.get(name);
    if (!p) throw new Error(`${this.name} has no property '${name}'`);
    return p;
  }

  /** The properties that go to an audience, in index order. */
  propertiesFor(audience: Audience): readonly PropertyDef[] {
    return this.byAudience[audience];
  }

  /** The methods of one kind. */
  methods(kind: MethodKind): readonly MethodDef[] {
    return kind === "cell" ? this.cellMethods : kind === "base" ? this.baseMethods : this.clientMethods;
  }

  /** A method by kind and name, or undefined. */
  findMethod(kind: MethodKind, name: string): MethodDef | undefined {
    return this.methodsByName[kind].get(name);
  }

  /** A method by kind and name; throws naming the type when it has none. */
  method(kind: MethodKind, name: string): MethodDef {
    const m = this.methodsByName[kind].get(name);
    if (!m) throw new Error(`${this.name} has no ${kind} method '${name}'`);
    return m;
  }

  /**
   * Takes on the definition of `next`, a compatible later version of this type (compat.ts), in place: entities,
   * containers and codecs holding this object see the new properties and methods from now on. `parent` is the
   * already-adopted parent (this registry's object, not `next`'s).
   */
  adopt(next: EntityType, parent: EntityType | null): void {
    Object.assign(this, next, { parent });
  }

  /** The detail level for a distance (0 = nearest level; lodLevels.length = beyond all). */
  detailLevelAt(distance: number): number {
    const levels = this.lodLevels;
    for (let i = 0; i < levels.length; i++) {
      if (distance <= levels[i].distance) return i;
    }
    return levels.length;
  }

  /**
   * The detail level after a move, with hysteresis (BigWorld's LoDLevels): a
   * level is entered within its distance and left only beyond its distance
   * plus its hysteresis, so an observer that stays in between keeps it.
   */
  updateDetailLevel(current: number, distance: number): number {
    const levels = this.lodLevels;
    let level = current;
    while (level > 0 && distance <= levels[level - 1].distance) level--;
    while (
      level < levels.length &&
      distance > levels[level].distance + levels[level].hysteresis
    ) {
      level++;
    }
    return level;
  }
}

/** Every entity type, by stable id and by name, and the warnings from building them. */
export class EntityRegistry {
  /** Every type, by id. */
  readonly types: readonly EntityType[];
  /** What building the types warned of (kept as metadata or ignored). */
  readonly warnings: readonly DefWarning[];
  private readonly byName: ReadonlyMap<string, EntityType>;

  /** Built by createRegistry or loadDefs. */
  constructor(types: EntityType[], warnings: DefWarning[]) {
    this.types = types;
    this.warnings = warnings;
    this.byName = new Map(types.map((t) => [t.name, t]));
  }

  /**
   * Takes on `next`, a compatible later version of this registry (compat.ts), in place: each existing type adopts
   * its new definition (keeping its identity), new types are added. Whoever holds this registry or one of its types
   * sees the new definitions.
   */
  adopt(next: EntityRegistry): void {
    const types: EntityType[] = [];
    for (const t of next.types) {
      const old = this.byName.get(t.name);
      const parent = t.parent ? types.find((x) => x.name === t.parent!.name) ?? null : null;
      if (old) old.adopt(t, parent);
      types.push(old ?? t);
    }
    Object.assign(this, { types, warnings: next.warnings, byName: new Map(types.map((t) => [t.name, t])) });
  }

  /** An entity type by name, or undefined. */
  find(name: string): EntityType | undefined {
    return this.byName.get(name);
  }

  /** An entity type by name; throws listing the known types. */
  get(name: string): EntityType {
    const t = this.byName.get(name);
    if (!t) {
      throw new Error(
        `unknown entity type '${name}' (known: ${this.types.map((x) => x.name).join(", ")})`,
      );
    }
    return t;
  }

  /** An entity type by its stable id; throws when out of range. */
  byId(id: number): EntityType {
    const t = this.types[id];
    if (!t) {
      throw new Error(
        `unknown entity type id ${id} (0..${this.types.length - 1})`,
      );
    }
    return t;
  }
}

/**
 * The arguments of a call of `kind` method `method` of `type` (an entity named `who` in errors), each converted to
 * its declared type. Throws naming the entity, the method and the argument when the method is unknown, the count is
 * wrong or a value does not fit.
 */
export function methodArgs(
  type: EntityType,
  kind: MethodKind,
  method: string,
  args: readonly unknown[],
  who = `${type.name}`,
): unknown[] {
  const m = type.findMethod(kind, method);
  if (!m) throw new Error(`${who} has no ${kind} method '${method}'`);
  if (args.length !== m.args.length) {
    throw new Error(`${who}.${method} takes ${m.args.length} arguments, got ${args.length}`);
  }
  return args.map((v, i) => {
    try {
      return m.args[i].type.coerce(v);
    } catch (e) {
      throw new Error(
        `${who}.${method} argument ${i} (${m.args[i].name ?? m.args[i].type.name}): ${errorText(e)}`,
        { cause: e },
      );
    }
  });
}
