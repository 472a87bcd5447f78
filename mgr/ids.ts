/**
 * Entity ids, unique across the cluster: handed to processes in ranges. The
 * high-water mark is written to Deno KV before a range is handed out, and
 * processes report the highest id they hold when they register, so a
 * restarted cellappmgr never hands out an id already in use.
 */
const KEY = ["cellappmgr", "entityIdHighWater"];

/** The cellappmgr's entity id counter. */
export class IdAllocator {
  #next = 1;
  #kv: Deno.Kv | null;

  private constructor(kv: Deno.Kv | null) {
    this.#kv = kv;
  }

  /** Opens the counter where the last run left it. */
  static async open(kv: Deno.Kv | null): Promise<IdAllocator> {
    const a = new IdAllocator(kv);
    if (kv) {
      const hw = (await kv.get<Deno.KvU64>(KEY)).value;
      if (hw instanceof Deno.KvU64) a.#next = Number(hw.value) + 1;
    }
    return a;
  }

  /** The next id that would be handed out. */
  get next(): number {
    return this.#next;
  }

  /** Takes note of ids a process already holds. */
  observe(highWater: number): void {
    if (highWater >= this.#next) this.#next = highWater + 1;
  }

  /** Reserves `count` ids as [start, end), durably when there is a database. */
  async allocate(count: number): Promise<[number, number]> {
    const start = this.#next;
    this.#next += count;
    // max(), not set(): concurrent allocations may commit in any order.
    if (this.#kv) await this.#kv.atomic().max(KEY, BigInt(this.#next - 1)).commit();
    return [start, start + count];
  }
}
