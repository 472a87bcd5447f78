/** The events a client raises, the entity objects they carry, and a small typed emitter. */
import type { EntityType } from "../core/def/mod.ts";

/** A position in a space, in metres (y is up). */
export interface Vec3 {
  /** East-west, metres. */
  x: number;
  /** Height, metres. */
  y: number;
  /** North-south, metres. */
  z: number;
}

/** An entity as the client knows it: the player or one in its AOI. */
export interface EntityView {
  /** The entity's id, the same on every process and client. */
  readonly id: number;
  /** Its entity type, from the registry given to `connect`. */
  readonly type: EntityType;
  /** Property values by name (what this client is allowed to see). */
  readonly props: Record<string, unknown>;
  /** Where it is, as last received (metres; packed positions are approximate: Client.positionErrorBound). */
  readonly position: Vec3;
  /** Heading, radians about the vertical axis. */
  readonly yaw: number;
  /** Pitch, radians. */
  readonly pitch: number;
  /** Roll, radians. */
  readonly roll: number;
  /** The LoD level it is seen at (0 = nearest). */
  readonly detailLevel: number;
}

/** How a property update came: where inside the property, and how the server named the entity. */
export interface PropertyUpdate {
  /** Where inside the property the change is, readable: `inventory[2].count`; just the name for the whole property. */
  readonly path: string;
  /** The same as indices, one per level below the property (array index, or FIXED_DICT field in declared order). */
  readonly indices: readonly number[];
  /** "set" replaces the value at the path; "slice" replaces `[start, end)` of the array at the path. */
  readonly kind: "set" | "slice";
  /** A slice's first replaced element; -1 for a set. */
  readonly start: number;
  /** A slice's end (exclusive) of the replaced elements; -1 for a set. */
  readonly end: number;
  /** Whether the server named the entity by its alias (a byte) rather than its full id. */
  readonly byAlias: boolean;
}

/** Every event of a Client, with its arguments. */
export interface ClientEvents {
  /** An entity entered the AOI (created with its properties). */
  enter: [entity: EntityView];
  /** An entity left the AOI. */
  leave: [id: number, entity: EntityView | undefined];
  /** A property of an entity in the AOI changed (name of the top-level property, its new value, and how). */
  property: [entity: EntityView, name: string, value: unknown, update: PropertyUpdate];
  /** An entity's position or direction changed; `full` when the position came unpacked (far from the reference). */
  move: [entity: EntityView, how: { full: boolean; byAlias: boolean }];
  /**
   * An entity is seen at another detail level (0 = nearest); `delivered`: the properties that came with the change
   * (those of nearer levels that changed since the client last had them). See Client.hasReceived.
   */
  detailLevel: [entity: EntityView, level: number, delivered: string[]];
  /** A client method called on an entity in the AOI. */
  clientMethod: [entity: EntityView, method: string, args: unknown[], how: { byAlias: boolean }];
  /** A property of the player changed (base or cell part). */
  playerProperty: [name: string, value: unknown];
  /** A client method called on the player (by its base or its cell). */
  playerMethod: [method: string, args: unknown[]];
  /** The player's cell entity exists. */
  cellReady: [spaceId: number, position: Vec3];
  /** The player's cell entity is gone. */
  cellGone: [reason: string];
  /** The server refused a move and put the player back here. */
  forcedPosition: [position: Vec3, direction: [number, number, number]];
  /** The server's reply to a bad message. */
  error: [code: number, message: string, about: number];
  /** The connection was lost and the client took its player back with its resume token, on the baseapp at `url`. */
  resumed: [url: string];
  /** The game was reloaded: the registry has the new definitions, held entities their new properties. */
  definitions: [version: string];
  /** The connection closed (after a lost connection: once resuming gave up). */
  close: [code: number, reason: string];
}

/** Subscribe/unsubscribe and emit for a fixed event map. */
export class Emitter<E extends { [K in keyof E]: unknown[] }> {
  #on: { [K in keyof E]?: ((...args: E[K]) => void)[] } = {};

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof E>(event: K, fn: (...args: E[K]) => void): () => void {
    (this.#on[event] ??= []).push(fn);
    return () => this.off(event, fn);
  }

  /** Removes a listener. */
  off<K extends keyof E>(event: K, fn: (...args: E[K]) => void): void {
    const list = this.#on[event];
    if (list) this.#on[event] = list.filter((f) => f !== fn);
  }

  /** Calls every listener of `event`; a listener that throws does not stop the others. */
  emit<K extends keyof E>(event: K, ...args: E[K]): void {
    const list = this.#on[event];
    if (!list) return;
    for (const fn of list) {
      try {
        fn(...args);
      } catch (e) {
        console.error(`client: a ${String(event)} listener failed:`, e);
      }
    }
  }
}
