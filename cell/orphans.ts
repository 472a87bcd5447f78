/**
 * Cell entities whose base is gone: its baseapp died (kill -9) and nobody
 * told the cell. Once a second the cellapp looks at the baseapps its reals'
 * bases are on; one it cannot reach is marked dead, its entities are logged
 * once as orphans, and nothing more is sent there (no warning per frame).
 * A baseapp that restores such an entity's base (from Deno KV, a restarted
 * or another baseapp) asks for its cell entity again: the orphan is adopted
 * (it takes the new base's address and its place) instead of refused as a
 * duplicate. An orphan nobody adopts within the timeout is destroyed.
 */
import { errorText } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { CellEntitySpec } from "../core/wire/mod.ts";
import type { Cell } from "./cell.ts";
import type { Entity } from "./entity.ts";

/** What orphan tracking needs of its cellapp. */
export interface OrphanHost {
  readonly cells: ReadonlyMap<string, Cell>;
  readonly log: Logger;
  /** Whether a channel to `address` is open now. */
  connected(address: string): boolean;
  /** Opens a channel to `address`; rejects when the process there cannot be reached. */
  dial(address: string): Promise<unknown>;
  /** Milliseconds an orphan waits to be adopted before it is destroyed. */
  readonly timeoutMs: number;
}

/** Default seconds an orphan waits to be adopted. */
export const DEFAULT_ORPHAN_TIMEOUT_SEC = 60;

/** The orphans of one cellapp, and the baseapps found dead. */
export class Orphans {
  /** Baseapp addresses found unreachable: nothing goes there until a baseapp there is heard from again. */
  readonly #dead = new Set<string>();
  /** When each orphan was found (performance.now() ms). */
  readonly #since = new Map<Entity, number>();
  readonly #probing = new Set<string>();

  constructor(private readonly host: OrphanHost) {}

  /** Whether `address` is a baseapp found dead (messages to it are dropped). */
  isDead(address: string): boolean {
    return this.#dead.size > 0 && this.#dead.has(address);
  }

  /** Orphans waiting to be adopted. */
  get size(): number {
    return this.#since.size;
  }

  /** Once a second: finds dead baseapps and new orphans, and destroys orphans past the timeout. */
  sweep(now = performance.now()): void {
    for (const address of this.#dead) if (this.host.connected(address)) this.#revived(address);
    const bases = new Set<string>();
    for (const cell of this.host.cells.values()) {
      for (const e of cell.entities.values()) {
        const base = e.baseAddress;
        if (base === null || e.destroyed) continue;
        if (!this.#dead.has(base)) {
          bases.add(base);
        } else if (!this.#since.has(e)) {
          this.#since.set(e, now);
          this.host.log.warn(
            `${e.type.name} ${e.id} lost its base at ${base}; it is destroyed unless a baseapp adopts it within ` +
              `${Math.round(this.host.timeoutMs / 1000)} s`,
          );
        }
      }
    }
    for (const [e, since] of this.#since) {
      if (!this.#isOrphan(e)) {
        this.#since.delete(e);
      } else if (now - since >= this.host.timeoutMs) {
        this.#since.delete(e);
        this.host.log.warn(`${e.type.name} ${e.id}: no baseapp adopted it in time; destroyed`);
        e.cell.destroyEntity(e, "its base is gone", false);
      }
    }
    for (const address of bases) if (!this.host.connected(address)) this.#probe(address);
  }

  /**
   * A base asks for the cell entity `spec` describes: when its real is in a cell of its space here, it is adopted
   * (see `adopt`) and this resolves true; false when there is none, to be made.
   */
  async claim(spec: CellEntitySpec): Promise<boolean> {
    for (const c of this.host.cells.values()) {
      const e = c.spaceId === spec.spaceId ? c.entities.get(spec.entityId) : undefined;
      if (e?.isReal) {
        await this.adopt(e, spec);
        return true;
      }
    }
    return false;
  }

  /**
   * A base asks for cell entity `e` again (its real is here): it adopts it when the base `e` has is the same one
   * (a repeated request, or a baseapp restarted on its address) or one found unreachable; a reachable other base
   * keeps it and the request is refused.
   */
  async adopt(e: Entity, spec: CellEntitySpec): Promise<void> {
    const old = e.baseAddress;
    if (old !== null && old !== spec.baseAddress && !this.#dead.has(old)) {
      const why = await this.#unreachable(old);
      if (why === null) {
        throw new Error(`entity ${e.id} already exists in space ${e.cell.spaceId}, with a live base at ${old}`);
      }
      this.#markDead(old, why);
    }
    if (e.destroyed || e.cell.entities.get(e.id) !== e) {
      throw new Error(`the cell entity ${e.id} moved or went while it was being adopted; ask again`);
    }
    this.#takeOver(e, spec.baseAddress, spec.hasClient);
    // The base restored its place from its database and tells its client so: the entity goes there.
    [e.yaw, e.pitch, e.roll] = spec.direction;
    e.cell.moveEntity(e, spec.position[0], spec.position[1], spec.position[2]);
    if (old !== spec.baseAddress) {
      this.host.log.info(`${e.type.name} ${e.id} adopted by its base at ${spec.baseAddress}`);
    }
  }

  /**
   * The base of real `e` was restored from its backup on the baseapp at `baseAddress` (its own died): `e` takes it as
   * its base where it is, so that its client frames, backups and orphan handling go there.
   */
  rebase(e: Entity, baseAddress: string): void {
    const old = e.baseAddress;
    this.#takeOver(e, baseAddress, true);
    this.host.log.info(
      `${e.type.name} ${e.id}: its base moved from ${old} to ${baseAddress} (restored from a backup)`,
      { entity: e.id, space: e.spaceID },
    );
  }

  /**
   * The cellappmgr says the baseapp at `address` died: found unreachable now rather than at the next sweep, nothing
   * more goes there and its entities wait to be adopted (one the cellappmgr dropped but that still answers is kept).
   */
  baseAppDied(address: string): void {
    this.#probe(address);
  }

  #takeOver(e: Entity, baseAddress: string, hasClient: boolean): void {
    this.#revived(baseAddress);
    this.#since.delete(e);
    const cell = e.cell;
    // A new base starts a new client: no witness of the old one, frames counted from epoch 0 again, and ghosts made
    // again so that they name the new base.
    cell.disableWitness(e);
    cell.dropGhosts(e);
    e.baseAddress = baseAddress;
    e.hasClient = hasClient;
    e.epoch = 0;
  }

  #isOrphan(e: Entity): boolean {
    return !e.destroyed && e.baseAddress !== null && this.#dead.has(e.baseAddress) && e.cell.entities.get(e.id) === e;
  }

  /** Why `address` cannot be reached, or null when it can. */
  async #unreachable(address: string): Promise<string | null> {
    try {
      await this.host.dial(address);
      return null;
    } catch (err) {
      return errorText(err);
    }
  }

  #probe(address: string): void {
    if (this.#probing.has(address)) return;
    this.#probing.add(address);
    this.#unreachable(address).then((why) => {
      this.#probing.delete(address);
      if (why !== null && !this.host.connected(address)) this.#markDead(address, why);
    });
  }

  #markDead(address: string, why: string): void {
    if (this.#dead.has(address)) return;
    this.#dead.add(address);
    this.host.log.warn(`the baseapp at ${address} is gone (${why}): its cell entities here wait to be adopted`);
  }

  #revived(address: string): void {
    if (this.#dead.delete(address)) this.host.log.info(`a baseapp is back at ${address}`);
  }
}
