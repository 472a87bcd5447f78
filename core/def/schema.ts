/**
 * The shape of entity definitions as written in TypeScript (entities/) or
 * produced by the .def loader. Plain data: behaviour lives elsewhere.
 */
import { SourcePos } from "./errors.ts";
import { Flag } from "./flags.ts";
import { DataType, ValueOf } from "./types.ts";

/** A type given as a DataType, or by name (built-in, alias, or registered user type). */
export type TypeRef = DataType | string;

/** One property of an entity type. */
export interface PropertySpec<T extends TypeRef = TypeRef> {
  /** The value type: a DataType from `T`, or a type's name. */
  readonly type: T;
  /** Who has and sees it: `CELL_PRIVATE`, `ALL_CLIENTS`, `BASE_AND_CLIENT`, ... (see Flag). */
  readonly flags: Flag;
  /** Start value; checked against the type when the registry is built. */
  readonly default?: unknown;
  /** Saved to the database with its entity. */
  readonly persistent?: boolean;
  /** LoD label (from lodLevels) within which other clients see this property. */
  readonly detailLevel?: string;
  /** Keep only the newest change in the history; nested changes become whole-property changes. */
  readonly sendLatestOnly?: boolean;
  /** The property that names the entity in the database (BigWorld's Identifier); at most one per type. */
  readonly identifier?: boolean;
  /** Tools may edit it (BigWorld's Editable); kept, not used by the server. */
  readonly editable?: boolean;
  /** What the definition said that has no meaning here (Utype, DatabaseLength, ...). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** A method argument: a type, or a named type. */
export type ArgSpec = TypeRef | {
  readonly name: string;
  readonly type: TypeRef;
};

/** A cell, base or client method. */
export interface MethodSpec {
  /** Its arguments, in order; none when left out. */
  readonly args?: readonly ArgSpec[];
  /** A client may call it (cell and base methods). */
  readonly exposed?: boolean;
  /** Client methods: only clients within this distance receive the call. */
  readonly detailDistance?: number;
  /** What the definition said that has no meaning here. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** A volatile member: `true` always sent, a number sent within that distance. */
export type VolatileLod = true | number;

/** Which volatile data (position and direction) is sent to clients. */
export interface VolatileSpec {
  /** Send the position. */
  readonly position?: VolatileLod;
  /** Send the yaw. */
  readonly yaw?: VolatileLod;
  /** Send the pitch. */
  readonly pitch?: VolatileLod;
  /** Send the roll. */
  readonly roll?: VolatileLod;
  /** KBEngine's `<optimized>` (don't send Y on the ground); kept as metadata. */
  readonly optimized?: boolean;
}

/** One level of detail: properties labelled with it are sent within `distance`. */
export interface LodLevelSpec {
  /** Its name, which properties' `detailLevel` names. */
  readonly label: string;
  /** Properties of this level are sent to clients within this distance (m). */
  readonly distance: number;
  /** How far past `distance` a client must go before it leaves this level (m). */
  readonly hysteresis?: number;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** A named part (KBEngine `<Components>`): the properties and methods of `type` under `name.`. */
export interface ComponentSpec {
  /** The interface/component definition that describes the part. */
  readonly type: string;
  /** Whether the part's properties are saved with the entity. */
  readonly persistent?: boolean;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** An entity type, or an interface/component that entity types include. */
export interface EntitySpec {
  /** The type's name, unique in its registry; scripts are bound to it. */
  readonly name: string;
  /** A type (or interface) this one extends: it gets its properties and methods first. */
  readonly parent?: string;
  /** Where `parent` was named, for messages. */
  readonly parentSource?: SourcePos;
  /** Interfaces whose properties and methods this type includes (BigWorld Implements). */
  readonly interfaces?: readonly string[];
  /** Named parts of this type (KBEngine components), by name. */
  readonly components?: Readonly<Record<string, ComponentSpec>>;
  /** A base entity with a client (BigWorld Proxy). */
  readonly proxy?: boolean;
  /** It has a base part, on a baseapp (a proxy always has). */
  readonly hasBase?: boolean;
  /** It has a cell part, in a space. */
  readonly hasCell?: boolean;
  /** Clients may see it (a proxy always has a client). */
  readonly hasClient?: boolean;
  /** Which of position and direction clients get as it moves. */
  readonly volatile?: VolatileSpec;
  /** Detail levels, by distance: properties of a farther level reach farther clients. */
  readonly lodLevels?: readonly LodLevelSpec[];
  /** Its properties, by name. */
  readonly properties?: Readonly<Record<string, PropertySpec>>;
  /** Methods of its cell part, by name (the caller's id comes first in a script). */
  readonly cellMethods?: Readonly<Record<string, MethodSpec>>;
  /** Methods of its base part, by name. */
  readonly baseMethods?: Readonly<Record<string, MethodSpec>>;
  /** Methods its clients have, by name (the server calls them). */
  readonly clientMethods?: Readonly<Record<string, MethodSpec>>;
  /** What the definition said that has no meaning here. */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /** Where it was defined, for messages. */
  readonly source?: SourcePos;
}

/** Declares an entity type; returns it unchanged but keeps its literal types for inference. */
export function defineEntity<const D extends EntitySpec>(spec: D): D {
  return spec;
}

/** The TypeScript shape of an entity's own property values, inferred from its spec. */
export type PropertyValues<D extends EntitySpec> = D["properties"] extends Readonly<Record<string, PropertySpec>> ? {
    -readonly [K in keyof D["properties"]]: ValueOf<D["properties"][K]["type"]>;
  }
  : Record<string, never>;
