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
  readonly type: T;
  readonly flags: Flag;
  /** Start value; checked against the type when the registry is built. */
  readonly default?: unknown;
  readonly persistent?: boolean;
  /** LoD label (from lodLevels) within which other clients see this property. */
  readonly detailLevel?: string;
  /** Keep only the newest change in the history; nested changes become whole-property changes. */
  readonly sendLatestOnly?: boolean;
  readonly identifier?: boolean;
  readonly editable?: boolean;
  /** What the definition said that has no meaning here (Utype, DatabaseLength, ...). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly source?: SourcePos;
}

/** A method argument: a type, or a named type. */
export type ArgSpec = TypeRef | {
  readonly name: string;
  readonly type: TypeRef;
};

/** A cell, base or client method. */
export interface MethodSpec {
  readonly args?: readonly ArgSpec[];
  /** A client may call it (cell and base methods). */
  readonly exposed?: boolean;
  /** Client methods: only clients within this distance receive the call. */
  readonly detailDistance?: number;
  readonly metadata?: Readonly<Record<string, unknown>>;
  readonly source?: SourcePos;
}

/** A volatile member: `true` always sent, a number sent within that distance. */
export type VolatileLod = true | number;

/** Which volatile data (position and direction) is sent to clients. */
export interface VolatileSpec {
  readonly position?: VolatileLod;
  readonly yaw?: VolatileLod;
  readonly pitch?: VolatileLod;
  readonly roll?: VolatileLod;
  /** KBEngine's `<optimized>` (don't send Y on the ground); kept as metadata. */
  readonly optimized?: boolean;
}

/** One level of detail: properties labelled with it are sent within `distance`. */
export interface LodLevelSpec {
  readonly label: string;
  readonly distance: number;
  readonly hysteresis?: number;
  readonly source?: SourcePos;
}

/** A named part (KBEngine `<Components>`): the properties and methods of `type` under `name.`. */
export interface ComponentSpec {
  /** The interface/component definition that describes the part. */
  readonly type: string;
  readonly persistent?: boolean;
  readonly source?: SourcePos;
}

/** An entity type, or an interface/component that entity types include. */
export interface EntitySpec {
  readonly name: string;
  readonly parent?: string;
  readonly parentSource?: SourcePos;
  /** Interfaces whose properties and methods this type includes (BigWorld Implements). */
  readonly interfaces?: readonly string[];
  readonly components?: Readonly<Record<string, ComponentSpec>>;
  /** A base entity with a client (BigWorld Proxy). */
  readonly proxy?: boolean;
  readonly hasBase?: boolean;
  readonly hasCell?: boolean;
  readonly hasClient?: boolean;
  readonly volatile?: VolatileSpec;
  readonly lodLevels?: readonly LodLevelSpec[];
  readonly properties?: Readonly<Record<string, PropertySpec>>;
  readonly cellMethods?: Readonly<Record<string, MethodSpec>>;
  readonly baseMethods?: Readonly<Record<string, MethodSpec>>;
  readonly clientMethods?: Readonly<Record<string, MethodSpec>>;
  readonly metadata?: Readonly<Record<string, unknown>>;
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
