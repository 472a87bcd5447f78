/**
 * The client's model of the world around its player (no network): it applies decoded AOI messages to a map of
 * entities, keeps the alias table and the reference position, caches entities that left with their per-level
 * event stamps and the life those belong to (and answers an enter of the same life with them, so the server sends
 * only what changed since; a cache of another life is dropped), and tells the game through a small typed emitter.
 */
import {
  ByteReader,
  ByteWriter,
  type ChangeRecord,
  type EntityRegistry,
  type EntityType,
  PropertyContainer,
} from "../core/def/mod.ts";
import { describePath } from "../core/def/mod.ts";
import { positionErrorBound } from "./position.ts";
import { WorldEmitter } from "./world_emitter.ts";
import {
  AOI_MESSAGES,
  type AoiDecodeContext,
  type AoiMessage,
  isAoiMessageId,
  isVolatileId,
  newVolatile,
  NO_ALIAS,
  POS_FULL,
  POS_XYZ,
  POS_XZ,
  type PropValue,
  readAoiMessage,
  readVolatileInto,
  skipVolatile,
  type VolatileMessage,
  writeRequestUpdate,
} from "../core/proto/mod.ts";

/** An entity the client sees. */
export interface ClientEntity {
  /** The entity's id, the same on every process and client. */
  readonly id: number;
  /** Its entity type, from the client's registry. */
  readonly type: EntityType;
  /** Its other-client properties. */
  readonly container: PropertyContainer;
  /** The properties by name (read them; the server changes them). */
  readonly props: Record<string, unknown>;
  /** Where it is, as last received (metres; packed positions are approximate: ClientWorld.positionErrorBound). */
  readonly position: { x: number; y: number; z: number };
  /** Heading, radians about the vertical axis. */
  yaw: number;
  /** Pitch, radians. */
  pitch: number;
  /** Roll, radians. */
  roll: number;
  /** The LoD level it is seen at (0 = nearest). */
  detailLevel: number;
  /** The one-byte alias the server names it by in updates; NO_ALIAS (255) when it has none. */
  alias: number;
  /** The life (epoch) of the entity's event numbering this copy follows. */
  life: number;
}

/** What the world tells its listeners. */
export interface WorldEvents {
  /** An entity was created; `fromCache` when a cached copy was reused; `sent`: the properties that came with it. */
  enter: { entity: ClientEntity; fromCache: boolean; sent: string[] };
  /** An entity left the AOI; `stamps`: its per-level event stamps, kept in the cache when not empty. */
  leave: { entity: ClientEntity; stamps: readonly number[] };
  /**
   * A property changed: `path` says where inside it (e.g. `inventory[2].count`, just the name for the whole
   * property; `change.path` has the indices); `byAlias` whether the server named the entity by its alias.
   */
  property: {
    entity: ClientEntity;
    name: string;
    value: unknown;
    change: ChangeRecord;
    path: string;
    byAlias: boolean;
  };
  /** The entity is seen at another detail level; `names`: the properties that came with the change. */
  detailLevel: { entity: ClientEntity; level: number; names: string[]; byAlias: boolean };
  /** A client method was called on an entity in the AOI, with its decoded arguments. */
  method: { entity: ClientEntity; name: string; args: unknown[]; byAlias: boolean };
  /** An entity's position or direction changed; `full` when the position came unpacked (far from the reference). */
  move: { entity: ClientEntity; full: boolean; byAlias: boolean };
  /** A property of the player (own-client, from its cell) changed. */
  ownProperty: { name: string; value: unknown; change: ChangeRecord };
  /** A client method was called on the player by its cell. */
  ownMethod: { name: string; args: unknown[] };
}

/** Every kind of AoI message, in the order of the protocol's declaration. */
const AOI_KINDS: readonly string[] = [...Object.keys(AOI_MESSAGES), "volatile"];

/** Zeroed counters of every AoI message kind (ClientWorld.counts). */
function newCounts(): Record<string, number> {
  const c: Record<string, number> = {};
  for (const kind of AOI_KINDS) c[kind] = 0;
  return c;
}

/** A left entity kept with its stamps, and the life they belong to. */
export interface CachedEntity {
  /** Its entity type. */
  type: EntityType;
  /** Its other-client properties as they were when it left. */
  container: PropertyContainer;
  /** The server's event stamp per detail level when it left (what the client had of each level). */
  stamps: number[];
  /** The life (epoch) of the entity's event numbering the stamps belong to. */
  life: number;
}

/** Options of a ClientWorld. */
export interface ClientWorldOptions {
  /** Sends client→server bytes (the re-entry requests), one frame per received frame. */
  send?: (frame: Uint8Array) => void;
  /** How many left entities to keep cached (least recently left dropped first). */
  cacheSize?: number;
  /**
   * Keep the entities' positions and directions up to date (default true). false: volatile updates are stepped over
   * unread, the entities keep the pose they were created with, and no move events are raised.
   */
  moves?: boolean;
}

/** The client-side AOI model. */
export class ClientWorld extends WorldEmitter<WorldEvents> implements AoiDecodeContext {
  /** The entities in the AOI (created, not left), by id. */
  readonly entities: Map<number, ClientEntity> = new Map();
  /** Entities that were announced and not created yet: id → alias and life. */
  readonly pending: Map<number, { alias: number; life: number }> = new Map();
  /** Entities that left, kept so that their re-entry costs only what changed since, by id (oldest first). */
  readonly cache: Map<number, CachedEntity> = new Map();
  /** The reference position (metres) that packed positions are offsets from, from the last reference message. */
  readonly reference: { x: number; y: number; z: number } = { x: 0, y: 0, z: 0 };
  /** The scale of packed positions, from the last reference message (larger: coarser). */
  scale = 1;
  /** The player's own entity, for own-client messages; null until setPlayer. */
  player: { id: number; type: EntityType; container: PropertyContainer } | null = null;
  /**
   * Messages applied, by kind. Every kind is there from the start, in one order, so that all worlds' counters share
   * one shape: a property added on first use would give each world its own, and the counting a lookup by hash.
   */
  readonly counts: Record<string, number> = newCounts();
  /** Entity id by alias; -1: none. Ids go up to 2^48 (core/bytes/ids.ts), so doubles, not 32-bit integers. */
  readonly #aliases = new Float64Array(256).fill(-1);
  /** The created entity by alias, so that an update by alias reaches its entity without a lookup by id. */
  readonly #aliased: (ClientEntity | undefined)[] = new Array(256).fill(undefined);
  readonly #out = new ByteWriter(64);
  /** The volatile update `handle` decodes into, each in turn. */
  readonly #volatile: VolatileMessage = newVolatile();
  readonly #cacheSize: number;
  /** Whether volatile updates are applied (ClientWorldOptions.moves). */
  readonly #moves: boolean;

  /**
   * A world with no entities; a Client makes its own (Client.world).
   *
   * @param registry The game's entity definitions, to decode what the server sends.
   * @param opts Where replies go, and how many left entities to cache (default 256).
   */
  constructor(readonly registry: EntityRegistry, readonly opts: ClientWorldOptions = {}) {
    super();
    this.#cacheSize = opts.cacheSize ?? 256;
    this.#moves = opts.moves !== false;
  }

  /** The player's own entity (for own-client messages). */
  setPlayer(id: number, type: EntityType | string): void {
    const t = typeof type === "string" ? this.registry.get(type) : type;
    this.player = { id, type: t, container: new PropertyContainer(t, "ownClient", { entityId: id }) };
  }

  /** AoiDecodeContext: the player's entity type; null until setPlayer. */
  get ownType(): EntityType | null {
    return this.player?.type ?? null;
  }

  /** AoiDecodeContext: the entity an alias stands for. */
  aliasId(alias: number): number {
    const id = this.#aliases[alias];
    if (id < 0) throw new RangeError(`unknown entity alias ${alias}`);
    return id;
  }

  /** AoiDecodeContext: the type of a known entity. */
  typeOf(id: number): EntityType | undefined {
    return this.entities.get(id)?.type;
  }

  /**
   * Whether property `name` of an entity holds what the server has, at the entity's current detail level: false for
   * a property of a nearer level than the entity is seen at (it reads as its default, or as it was when last seen
   * that near). Throws for a name the type's clients do not see.
   */
  hasReceived(entity: ClientEntity | number, name: string): boolean {
    const e = typeof entity === "number" ? this.entities.get(entity) : entity;
    if (!e) return false;
    const p = e.type.properties.find((q) => q.name === name);
    if (!p || !e.type.propertiesFor("otherClients").includes(p)) {
      throw new RangeError(`${e.type.name} has no property "${name}" that other clients see`);
    }
    // The server keeps a client up to date on the levels from the one it sees the entity at outwards, and brings a
    // level up to date (what changed since the client's stamp for it) as the entity comes that near.
    return p.detailLevel >= e.detailLevel;
  }

  /** How far a position held here may be off the server's on each axis: at `at`, or anywhere when absent. */
  positionErrorBound(at?: { x: number; y: number; z: number }): { x: number; y: number; z: number } {
    return positionErrorBound(this.reference, this.scale, at);
  }

  /** Applies a frame of AOI messages; throws on anything else or on malformed data. */
  receive(frame: Uint8Array): void {
    const r = new ByteReader(frame);
    while (r.remaining > 0) {
      const id = r.u8();
      if (!this.handle(id, r)) throw new RangeError(`message id ${id} is not an AOI message`);
    }
    this.flush();
  }

  /** Decodes and applies one message whose id was read; false when the id is not an AOI message. */
  handle(id: number, r: ByteReader): boolean {
    if (!isAoiMessageId(id)) return false;
    if (!isVolatileId(id)) this.apply(readAoiMessage(r, id, this));
    // Most of a client's traffic is volatile updates: each is read into the same object, applied and forgotten.
    else {
      if (this.#moves) this.#volatileUpdate(readVolatileInto(r, id, this, this.#volatile));
      else skipVolatile(r, id);
      this.counts.volatile++;
    }
    return true;
  }

  /** Sends the requests queued while applying messages. */
  flush(): void {
    if (this.#out.pos === 0) return;
    const bytes = this.#out.toBytes();
    this.#out.reset();
    this.opts.send?.(bytes);
  }

  /**
   * Applies one decoded message (receive and handle decode for it).
   *
   * @internal The decoded form is the wire protocol's (core/proto), not part of the SDK's API.
   */
  apply(m: AoiMessage): void {
    this.counts[m.kind]++;
    switch (m.kind) {
      case "enter": {
        if (m.alias !== NO_ALIAS) {
          this.#aliases[m.alias] = m.id;
          this.#aliased[m.alias] = undefined;
        }
        this.pending.set(m.id, { alias: m.alias, life: m.life });
        const cached = this.cache.get(m.id);
        const usable = cached !== undefined && cached.life === m.life;
        // A copy of another life of the entity (it was made again): its stamps mean nothing now.
        if (cached && !usable) this.cache.delete(m.id);
        writeRequestUpdate(this.#out, m.id, usable ? m.life : 0, usable ? cached.stamps : []);
        return;
      }
      case "create":
        return this.#create(m);
      case "leave":
        return this.#leave(m.id, m.stamps);
      case "property": {
        const e = this.#entity(m.id);
        e.container.apply(m.change, false);
        const prop = e.type.properties[m.change.index];
        if (this.has("property")) {
          const value = e.container.raw(m.change.index), path = describePath(prop, m.change.path);
          const byAlias = m.alias !== NO_ALIAS;
          this.emit("property", { entity: e, name: prop.name, value, change: m.change, path, byAlias });
        }
        return;
      }
      case "detailLevel": {
        const e = this.#entity(m.id);
        e.detailLevel = m.detailLevel;
        const names = load(e.container, m.props);
        this.emit("detailLevel", { entity: e, level: m.detailLevel, names, byAlias: m.alias !== NO_ALIAS });
        return;
      }
      case "reference":
        this.reference.x = m.x;
        this.reference.y = m.y;
        this.reference.z = m.z;
        this.scale = m.scale;
        return;
      case "method":
        this.emit("method", {
          entity: this.#entity(m.id),
          name: m.method.name,
          args: m.args,
          byAlias: m.alias !== NO_ALIAS,
        });
        return;
      case "ownProperty": {
        const p = this.player!;
        p.container.apply(m.change, false);
        const name = p.type.properties[m.change.index].name;
        this.emit("ownProperty", { name, value: p.container.raw(m.change.index), change: m.change });
        return;
      }
      case "ownMethod":
        this.emit("ownMethod", { name: m.method.name, args: m.args });
        return;
      case "volatile":
        return this.#volatileUpdate(m);
      case "requestUpdate":
        throw new RangeError("requestUpdate is a client→server message");
    }
  }

  /**
   * A volatile update: the entity's new position and direction. Called straight from `handle` for the volatile
   * updates it decodes into its one object, so that `apply`'s dispatch on the kind of every message shape is not
   * in their path (most of a client's traffic).
   */
  #volatileUpdate(m: VolatileMessage): void {
    const byAlias = m.alias !== NO_ALIAS ? this.#aliased[m.alias] : undefined;
    const e = byAlias !== undefined && byAlias.id === m.id ? byAlias : this.#entity(m.id);
    const p = e.position, ref = this.reference;
    if (m.posType === POS_XZ || m.posType === POS_XYZ) {
      p.x = ref.x + m.x;
      p.z = ref.z + m.z;
      if (m.posType === POS_XYZ) p.y = ref.y + m.y;
    } else if (m.posType === POS_FULL) {
      p.x = m.x;
      p.y = m.y;
      p.z = m.z;
    }
    if (!Number.isNaN(m.yaw)) e.yaw = m.yaw;
    if (!Number.isNaN(m.pitch)) e.pitch = m.pitch;
    if (!Number.isNaN(m.roll)) e.roll = m.roll;
    if (this.has("move")) {
      this.emit("move", { entity: e, full: m.posType === POS_FULL, byAlias: m.alias !== NO_ALIAS });
    }
  }

  #entity(id: number): ClientEntity {
    const e = this.entities.get(id);
    if (!e) throw new RangeError(`AOI update for entity ${id}, which the client does not have`);
    return e;
  }

  #create(m: Extract<AoiMessage, { kind: "create" }>): void {
    const announced = this.pending.get(m.id);
    const alias = announced?.alias ?? NO_ALIAS, life = announced?.life ?? 0;
    this.pending.delete(m.id);
    const cached = this.cache.get(m.id);
    this.cache.delete(m.id);
    const fromCache = cached !== undefined && cached.type === m.type && cached.life === life;
    const container = fromCache ? cached!.container : new PropertyContainer(m.type, "otherClients", { entityId: m.id });
    const sent = load(container, m.props);
    const e: ClientEntity = {
      id: m.id,
      type: m.type,
      container,
      props: container.view as Record<string, unknown>,
      position: { x: m.pose.x, y: m.pose.y, z: m.pose.z },
      yaw: m.pose.yaw,
      pitch: m.pose.pitch,
      roll: m.pose.roll,
      detailLevel: m.detailLevel,
      alias,
      life,
    };
    this.entities.set(m.id, e);
    if (alias !== NO_ALIAS && this.#aliases[alias] === m.id) this.#aliased[alias] = e;
    this.emit("enter", { entity: e, fromCache, sent });
  }

  #leave(id: number, stamps: number[]): void {
    const e = this.entities.get(id);
    const alias = e ? e.alias : this.pending.get(id)?.alias;
    if (alias !== undefined && alias !== NO_ALIAS && this.#aliases[alias] === id) {
      this.#aliases[alias] = -1;
      this.#aliased[alias] = undefined;
    }
    this.pending.delete(id);
    if (!e) return;
    this.entities.delete(id);
    if (stamps.length > 0 && this.#cacheSize > 0) {
      this.cache.set(id, { type: e.type, container: e.container, stamps, life: e.life });
      if (this.cache.size > this.#cacheSize) this.cache.delete(this.cache.keys().next().value!);
    }
    this.emit("leave", { entity: e, stamps });
  }
}

function load(c: PropertyContainer, props: readonly PropValue[]): string[] {
  const names: string[] = [];
  for (const p of props) {
    c.load(p.index, p.value);
    names.push(c.type.properties[p.index].name);
  }
  return names;
}
