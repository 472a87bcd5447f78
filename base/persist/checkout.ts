/**
 * Account checkouts (BigWorld's "checked out" entities): the entity of a logged-in account is checked out in the
 * database to one base on one baseapp, with a generation raised by every new holder. A login, a restore from a
 * backup and a resume claim it with a check of the record they read, so that of two claims at once (two baseapps
 * in the same millisecond) one commits and the other sees who won; a logout gives it back (the generation kept).
 *
 * Keys: ["checkout", entityId] → CheckoutRecord; ["checkedOut", baseapp, entityId] → generation, an index of what
 * each baseapp holds (written in the same commits), so that the checkouts of a baseapp that is no longer live are
 * found without reading every account's.
 */
import type { Db, DbCheck, DbEntry, DbKey } from "../../core/db/mod.ts";
import { withKvRetry } from "./kv_retry.ts";

/** Who holds a checkout: a baseapp's registration and address. */
export interface CheckoutHolder {
  baseapp: number;
  address: string;
}

/** What the database holds per entity checked out (or given back: `holder` null). */
export interface CheckoutRecord {
  holder: CheckoutHolder | null;
  /** Raised by one at every claim: a base knows whether the checkout is still its own. */
  generation: number;
  /** When it was claimed or given back (Date.now() ms of the writer). */
  at: number;
}

/** The key of entity `id`'s checkout. */
export function checkoutKey(id: number): DbKey {
  return ["checkout", id];
}

/** The index key of entity `id` checked out to baseapp `baseapp`. */
export function heldByKey(baseapp: number, id: number): DbKey {
  return ["checkedOut", baseapp, id];
}

/** A checkout as read: its record (null: never checked out) and versionstamp, to claim it over. */
export type CheckoutEntry = DbEntry<CheckoutRecord>;

/** The checkouts one baseapp holds, and its reads and claims of them in the database. */
export class Checkouts {
  /** The generation of each entity checked out to this baseapp, and the versionstamp its claim committed at. */
  readonly #held = new Map<number, { generation: number; versionstamp: string }>();
  /** Releases under way, by entity id: a login here waits for one before it reads the checkout. */
  readonly #releasing = new Map<number, Promise<boolean>>();

  /** `self` is this baseapp as a holder (null before it is registered: it claims nothing then). */
  constructor(private readonly db: Db, private readonly self: () => CheckoutHolder | null) {}

  /** The checkout of entity `id` as the database holds it now; throws DbUnavailableError when unreachable. */
  read(id: number): Promise<CheckoutEntry> {
    return withKvRetry(() => this.db.get<CheckoutRecord>(checkoutKey(id)));
  }

  /**
   * Checks entity `id` out to this baseapp over `seen` (the record read before): its new generation, or null when
   * another claim or release committed since (read again to see whose it is).
   */
  async claim(id: number, seen: CheckoutEntry): Promise<number | null> {
    const holder = this.self();
    if (!holder) throw new Error(`entity ${id} cannot be checked out: this baseapp is not registered yet`);
    const generation = (seen.value?.generation ?? 0) + 1;
    const record: CheckoutRecord = { holder, generation, at: Date.now() };
    const key = checkoutKey(id);
    const old = seen.value?.holder;
    const res = await withKvRetry(() => {
      const op = this.db.atomic().check({ key, versionstamp: seen.versionstamp }).set(key, record);
      if (old && old.baseapp !== holder.baseapp) op.delete(heldByKey(old.baseapp, id));
      return op.set(heldByKey(holder.baseapp, id), generation).commit();
    });
    if (!res.ok) return null;
    this.#held.set(id, { generation, versionstamp: res.versionstamp });
    return generation;
  }

  /** The generation of entity `id`'s checkout held here, or undefined. */
  generation(id: number): number | undefined {
    return this.#held.get(id)?.generation;
  }

  /**
   * "Entity `id` is still checked out to this baseapp as it claimed it": a check a save of its base commits with, so
   * that a base whose checkout another baseapp claimed since writes nothing. Null when none is held here.
   */
  heldCheck(id: number): DbCheck | null {
    const held = this.#held.get(id);
    return held ? { key: checkoutKey(id), versionstamp: held.versionstamp } : null;
  }

  /**
   * Gives entity `id`'s checkout back (its base logged out): only if it is still the one this baseapp claimed, so a
   * later holder's is never touched. Resolves true when given back, false when it was not this baseapp's any more.
   */
  release(id: number): Promise<boolean> {
    const generation = this.#held.get(id)?.generation;
    if (generation === undefined) return Promise.resolve(false);
    this.#held.delete(id);
    const done = this.#release(id, generation).finally(() => {
      if (this.#releasing.get(id) === done) this.#releasing.delete(id);
    });
    this.#releasing.set(id, done);
    return done;
  }

  /** Resolves once every release under way is done (before the database closes). */
  async allReleased(): Promise<void> {
    await Promise.all([...this.#releasing.values()].map((p) => p.catch(() => false)));
  }

  /** Resolves once a release of entity `id` under way (if any) is done, whether or not it succeeded. */
  async released(id: number): Promise<void> {
    await this.#releasing.get(id)?.catch(() => false);
  }

  async #release(id: number, generation: number): Promise<boolean> {
    for (let tries = 0; tries < 5; tries++) {
      const seen = await this.read(id);
      const r = seen.value;
      if (!r?.holder || r.generation !== generation || !this.#isSelf(r.holder)) return false;
      if (await this.#giveBack(seen, r.holder)) return true;
    }
    return false;
  }

  /**
   * The checkouts the database lists under baseapps other than `live` ones: entity id and checkout as read, by the
   * holder's registration id.
   */
  async heldByNotLive(live: ReadonlySet<number>): Promise<Map<number, { id: number; seen: CheckoutEntry }[]>> {
    const out = new Map<number, { id: number; seen: CheckoutEntry }[]>();
    for await (const e of this.db.list<number>(["checkedOut"])) {
      const [, baseapp, id] = e.key;
      if (typeof baseapp !== "number" || typeof id !== "number" || live.has(baseapp)) continue;
      const seen = await this.read(id);
      if (seen.value?.holder?.baseapp !== baseapp) {
        // A leftover of an index entry whose checkout moved on: dropped if it is still the same.
        await withKvRetry(() => this.db.atomic().check(e).delete(e.key).commit());
        continue;
      }
      let list = out.get(baseapp);
      if (!list) out.set(baseapp, list = []);
      list.push({ id, seen });
    }
    return out;
  }

  /** Gives back a checkout of another baseapp, as read in `seen` (it is not live): false when it changed since. */
  releaseStale(seen: CheckoutEntry): Promise<boolean> {
    const holder = seen.value?.holder;
    return holder ? this.#giveBack(seen, holder) : Promise.resolve(false);
  }

  async #giveBack(seen: CheckoutEntry, holder: CheckoutHolder): Promise<boolean> {
    const id = seen.key[1] as number;
    const record: CheckoutRecord = { holder: null, generation: seen.value!.generation, at: Date.now() };
    const res = await withKvRetry(() =>
      this.db.atomic().check(seen).set(seen.key, record).delete(heldByKey(holder.baseapp, id)).commit()
    );
    return res.ok;
  }

  /** This baseapp was fenced: what it held was claimed by the baseapps that restored its bases. */
  forgetAll(): void {
    this.#held.clear();
  }

  /** Whether `holder` is this baseapp (this registration, not an earlier one on the same address). */
  isSelf(holder: CheckoutHolder): boolean {
    return this.#isSelf(holder);
  }

  #isSelf(holder: CheckoutHolder): boolean {
    const self = this.self();
    return self !== null && self.baseapp === holder.baseapp && self.address === holder.address;
  }
}

/** "entity 12 (generation 3, baseapp 2 at 127.0.0.1:4000)": a checkout for log lines. */
export function describeCheckout(id: number, r: CheckoutRecord | null): string {
  if (!r) return `entity ${id} (never checked out)`;
  const who = r.holder ? `baseapp ${r.holder.baseapp} at ${r.holder.address}` : "given back";
  return `entity ${id} (generation ${r.generation}, ${who})`;
}
