/**
 * The game's view of a base entity (BigWorld's and KBEngine's Base): its
 * properties and client, its cell part, other bases, the global store and
 * the database. Game code extends BaseScript and sees only this, so it never
 * depends on how baseapps work.
 */

import type { Vec3 } from "./geo/vec3.ts";

/** Where a base entity lives: its id, and the baseapp holding it (a hint: it may have moved since). */
export interface BaseRef {
  /** The base entity's id. */
  readonly id: number;
  /** The baseapp that held it when the ref was made, HOST:PORT. */
  readonly address: string;
}

/** The cell part of a base entity, as its base script calls it. */
export interface CellPart {
  /** True while the cell entity exists. */
  readonly exists: boolean;
  /**
   * Calls cell method `method` of this entity's cell entity (the caller passed first is the entity itself).
   * Resolves with what it returns; rejects when there is no cell entity, the method is unknown, the arguments do
   * not match its declaration, it throws, or no answer comes within the call timeout.
   */
  call(method: string, ...args: unknown[]): Promise<unknown>;
}

/**
 * Where createCellEntity puts a base's cell entity: near another entity (in its space, at `position` or else at that
 * entity's position; BigWorld's createCellEntity(nearbyMailbox)), or in space `spaceId` at `position`.
 */
export type CellEntityPlace =
  | { near: number | BaseRef; position?: Vec3; direction?: Vec3 }
  | { spaceId: number; position: Vec3; direction?: Vec3 };

/**
 * A new space for createInNewSpace (an instance: a dungeon, an arena). An object, so that options can be added.
 * The space is centred on the origin and shuts down once every entity has left it.
 */
export interface NewSpaceOptions {
  /** Its side in metres (a square), or its width along X and depth along Z; each 10-100,000 m. */
  size: number | { width: number; depth: number };
  /** How many cells it starts with, of equal area (1-64; default 1). */
  cells?: number;
  /** Put its cells on cellapps of this host when they have room (BigWorld's preferred IP): an address or name. */
  preferredHost?: string;
  /**
   * Its navigation geometry: an OBJ mesh, a height field or a prebuilt navmesh that every cellapp can read
   * (docs/game.md, "Navigation"); left out, the game's spaceGeometry hook says.
   */
  geometry?: string;
  /** Where the cell entity goes in it (default the centre, y 0). */
  position?: Vec3;
  /** Where it faces: x yaw, y pitch, z roll, in radians (default 0). */
  direction?: Vec3;
}

/** Where a cell entity was made. */
export interface CellEntityPlaced {
  /** The space it is in. */
  spaceId: number;
  /** Where in that space. */
  position: Vec3;
}

/** A direct line to one player's client (BigWorld's mailbox.client): its own entity's client methods. */
export interface ClientOf {
  /**
   * Calls client method `method` of the player's own entity on its client, through the baseapp holding its base.
   * Resolves once sent on; rejects when the base is not found, has no client, or the method or arguments are wrong.
   */
  call(method: string, ...args: unknown[]): Promise<void>;
}

/**
 * The store shared by every baseapp (KBEngine's globalData). Values are JSON-like (null, booleans, finite numbers,
 * strings, arrays, plain objects) of at most MAX_GLOBAL_VALUE_BYTES encoded; keys are 1-200 characters.
 */
export interface GlobalData {
  /** The value of `key` as this baseapp last heard it, or undefined. */
  get(key: string): unknown;
  /** Every key this baseapp knows. */
  keys(): string[];
  /** Sets `key` everywhere; resolves once the cellappmgr ordered it. Rejects a bad key or value at once. */
  set(key: string, value: unknown): Promise<void>;
  /** Removes `key` everywhere. */
  delete(key: string): Promise<void>;
}

/** Largest encoded global value. */
export const MAX_GLOBAL_VALUE_BYTES = 16 * 1024;
/** Longest global key. */
export const MAX_GLOBAL_KEY = 200;

/** A base entity as its script sees it. */
export interface BaseEntityApi<P = Record<string, unknown>> {
  /** The entity's id, unique in the cluster; its cell entity has the same. */
  readonly id: number;
  /** The name of its entity type. */
  readonly typeName: string;
  /** The base properties; setting one is checked, and BASE_AND_CLIENT ones reach the own client. */
  readonly props: P;
  /** True while a client is attached. */
  readonly hasClient: boolean;
  /** Where this base is, to hand to other bases. */
  readonly ref: BaseRef;
  /** Its cell entity. */
  readonly cell: CellPart;
  /** The store shared by all baseapps. */
  readonly globalData: GlobalData;
  /** Calls a client method on the entity's own client (dropped without a client). */
  callClient(method: string, ...args: unknown[]): void;
  /** The client of another player (by its entity id or ref), on whichever baseapp holds it: direct messages. */
  clientOf(player: number | BaseRef): ClientOf;
  /**
   * Creates the cell entity near another entity or in a space (see CellEntityPlace); resolves where it went. Rejects
   * when the type has no cell, there is a cell entity already, or the space or entity is unknown.
   */
  createCellEntity(where: CellEntityPlace): Promise<CellEntityPlaced>;
  /**
   * Creates the cell entity in a new space of its own (BigWorld's createInNewSpace): its cells on the least loaded
   * cellapps, those of `preferredHost` first. Rejects a size or cell count beyond the limits, naming it.
   */
  createInNewSpace(options: NewSpaceOptions): Promise<CellEntityPlaced>;
  /** Destroys the cell entity; its persistent cell properties come back to the base. Rejects when there is none. */
  destroyCellEntity(): Promise<void>;
  /**
   * Has the cell entity teleport to `position` in space `spaceId` (its own when left out), wherever its real is;
   * resolves once it is there. Rejects when there is no cell entity or no such space.
   */
  teleport(position: Vec3, spaceId?: number): Promise<void>;
  /**
   * Calls base method `method` of base `target` (an id, or a ref from createBaseAnywhere), on this baseapp or
   * another. Resolves with what it returns; rejects naming the base and method when the base is gone, the method
   * unknown, the arguments wrong, it throws, or no answer comes within the call timeout.
   */
  callBase(target: number | BaseRef, method: string, ...args: unknown[]): Promise<unknown>;
  /** Creates a base-only entity of `type` on the least loaded baseapp; resolves with where it is. */
  createBaseAnywhere(type: string, props?: Record<string, unknown>): Promise<BaseRef>;
  /** Writes the persistent properties (the cell part's as the cell has them now) in one commit; resolves once committed. */
  writeToDB(): Promise<void>;
  /** Writes the entity to the database, destroys its cell part and disconnects its client. */
  logout(): Promise<void>;
  /** Destroys the entity (as logout does: written first when persistent). */
  destroy(): Promise<void>;
}

/**
 * A base script: one object per base entity, constructed with its entity. Base methods are its methods, called with
 * the declared arguments (no hidden caller). Every callback is optional; an exception in one is logged.
 */
export abstract class BaseScript<P = Record<string, unknown>> {
  /** The baseapp makes one per base entity; a subclass's constructor takes the same argument. */
  constructor(
    /** Its entity: properties, client, cell part, other bases, the global store and the database. */
    readonly self: BaseEntityApi<P>,
  ) {}
  /** The entity was created, loaded for a login, or restored from its backup. */
  onCreated?(): void;
  /** A client attached (a login, a resume, or a takeover). */
  onClientConnected?(): void;
  /** The client went away. */
  onClientDisconnected?(): void;
  /** The entity is about to be written and destroyed (logout, destroy, shutdown). */
  onDestroy?(): void;
  /** A global value changed (on any baseapp); `value` is undefined when it was deleted. */
  onGlobalData?(key: string, value: unknown): void;
}

/** A base script class as the baseapp instantiates it; any property type, so that a game registers it without a cast. */
// deno-lint-ignore no-explicit-any
export type BaseScriptClass = new (self: BaseEntityApi<any>) => BaseScript<any>;

/** Base scripts by entity type name. */
export type BaseScripts = Readonly<Record<string, BaseScriptClass>>;

/**
 * Why `value` cannot be a global value (or a createBaseAnywhere property): null when it can. JSON-like values only,
 * so every baseapp and the database read back what was written.
 */
export function checkGlobalValue(value: unknown, depth = 0): string | null {
  if (depth > 16) return "nested deeper than 16 levels";
  if (value === null || typeof value === "boolean" || typeof value === "string") return null;
  if (typeof value === "number") return Number.isFinite(value) ? null : `${value} is not a finite number`;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const why = checkGlobalValue(value[i], depth + 1);
      if (why) return `[${i}]: ${why}`;
    }
    return null;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const why = checkGlobalValue(v, depth + 1);
      if (why) return `.${k}: ${why}`;
    }
    return null;
  }
  return `a ${typeof value === "object" ? (value as object).constructor?.name ?? "object" : typeof value} ` +
    "is not allowed (null, booleans, finite numbers, strings, arrays and plain objects are)";
}

/** Why `key`/`value` cannot be stored globally, or null; `value` undefined means a deletion. */
export function checkGlobalEntry(key: unknown, value: unknown): string | null {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_GLOBAL_KEY) {
    return `a global key is a string of 1-${MAX_GLOBAL_KEY} characters`;
  }
  if (value === undefined) return null;
  const why = checkGlobalValue(value);
  if (why) return `global value of "${key}": ${why}`;
  const size = new TextEncoder().encode(JSON.stringify(value)).length;
  if (size > MAX_GLOBAL_VALUE_BYTES) {
    return `global value of "${key}" is ${size} bytes encoded; at most ${MAX_GLOBAL_VALUE_BYTES} are allowed`;
  }
  return null;
}
