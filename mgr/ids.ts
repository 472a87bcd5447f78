/**
 * Entity ids, unique across the cluster: handed to processes in ranges. The
 * high-water mark is written to the database before a range is handed out, and
 * processes report the highest id they hold when they register, so a
 * restarted cellappmgr never hands out an id already in use.
 */
import { MAX_ENTITY_ID } from "../core/bytes/mod.ts";
import { type Db, withDbRetry } from "../core/db/mod.ts";

const KEY = ["cellappmgr", "entityIdHighWater"];

/**
 * How far past the counter a process may report ids (a cellappmgr that lost
 * its database, or a base loaded from a database it never saw): far more
 * than a cluster hands out, far less than the id space.
 */
export const OBSERVE_SLACK = 2 ** 32;

/** The cellappmgr's entity id counter. */
export class IdAllocator {
  #next = 1;
  #kv: Db | null;

  private constructor(kv: Db | null) {
    this.#kv = kv;
  }

  /** Opens the counter where the last run left it. */
  static async open(kv: Db | null): Promise<IdAllocator> {
    const a = new IdAllocator(kv);
    if (kv) {
      const hw = (await withDbRetry(() => kv.get<bigint>(KEY), { waitWhileUnavailable: true })).value;
      if (typeof hw === "bigint") a.#next = Number(hw) + 1;
    }
    return a;
  }

  /** The next id that would be handed out. */
  get next(): number {
    return this.#next;
  }

  /**
   * Takes note of ids a process already holds. An id far beyond any handed
   * out (more than OBSERVE_SLACK past the counter) is refused with the
   * reason: believing it would let one process use up the id space.
   */
  observe(highWater: number): string | null {
    if (highWater < this.#next) return null;
    if (highWater - this.#next > OBSERVE_SLACK || highWater > MAX_ENTITY_ID) {
      return `entity id ${highWater} is more than ${OBSERVE_SLACK} past the highest handed out (${this.#next - 1})`;
    }
    this.#next = highWater + 1;
    return null;
  }

  /** Reserves `count` ids as [start, end), durably when there is a database. */
  async allocate(count: number): Promise<[number, number]> {
    const start = this.#next;
    if (!(Number.isSafeInteger(count) && count > 0) || start + count - 1 > MAX_ENTITY_ID) {
      throw new Error(
        `cannot hand out ${count} entity ids: ids end at ${MAX_ENTITY_ID} and ${start} is next ` +
          `(a process reported an id high-water mark this high)`,
      );
    }
    this.#next += count;
    // max(), not set(): concurrent allocations may commit in any order.
    // An unreachable database is waited for: no range is handed out before its mark is stored.
    const kv = this.#kv;
    if (kv) {
      await withDbRetry(() => kv.atomic().max(KEY, BigInt(this.#next - 1)).commit(), { waitWhileUnavailable: true });
    }
    return [start, start + count];
  }
}
