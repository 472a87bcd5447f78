import { type Channel, ChannelClosedError } from "./wire/mod.ts";
import { MgrMsg } from "./wire/mod.ts";
import type { Logger } from "./log.ts";

/** Raised when an entity id is needed and the pool is empty. */
export class NoIdsError extends Error {
  override name = "NoIdsError";
}

/**
 * Entity ids handed out by the cellappmgr in ranges, so that every id is
 * unique across the cluster while creating an entity stays synchronous: the
 * pool asks for the next range while it still has a reserve.
 */
export class EntityIdPool {
  #ranges: [number, number][] = [];
  #available = 0;
  #requesting = false;
  /** The highest id ever received or held (see `noteHeld`), reported when registering again. */
  highWater = 0;

  constructor(
    private readonly channel: () => Channel | null,
    private readonly log: Logger,
    private readonly batch = 1000,
    /** The channel once the cellappmgr is back; without it `next` fails while the cellappmgr is away. */
    private readonly reconnected?: () => Promise<Channel>,
  ) {}

  /** Counts ids this process holds from elsewhere (a baseapp's database) into the high-water mark it reports. */
  noteHeld(highWater: number): void {
    this.highWater = Math.max(this.highWater, highWater);
  }

  /** Ids left before the pool must ask again. */
  get available(): number {
    return this.#available;
  }

  /** Resolves once the pool holds at least `n` ids (asking the cellappmgr as needed). */
  async ensure(n = 1): Promise<void> {
    while (this.#available < n) {
      const ch = this.channel();
      if (!ch) throw new NoIdsError("no entity ids: the cellappmgr is not reachable");
      await this.#fetch(ch, Math.max(this.batch, n - this.#available));
    }
    this.#topUp();
  }

  /**
   * The next unused id, waiting for the cellappmgr when the pool is empty
   * (concurrent callers each get one), also while it is away when the pool
   * was given `reconnected`.
   */
  async next(): Promise<number> {
    while (this.#available < 1) {
      if (this.reconnected && !this.channel()) await this.reconnected();
      try {
        await this.ensure(1);
      } catch (e) {
        // The cellappmgr went away between the two: wait for it again.
        if (!this.reconnected || !(e instanceof NoIdsError || e instanceof ChannelClosedError)) throw e;
      }
    }
    return this.take();
  }

  /** The next unused id; throws NoIdsError when the pool is empty. */
  take(): number {
    const r = this.#ranges[0];
    if (!r) throw new NoIdsError("no entity ids left: the cellappmgr has not answered a request for more");
    const id = r[0]++;
    if (r[0] >= r[1]) this.#ranges.shift();
    this.#available--;
    this.#topUp();
    return id;
  }

  #topUp(): void {
    if (this.#available >= this.batch / 2 || this.#requesting) return;
    const ch = this.channel();
    if (ch) this.#fetch(ch, this.batch).catch((e) => this.log.warn(`could not get more entity ids: ${e.message}`));
  }

  async #fetch(ch: Channel, count: number): Promise<void> {
    this.#requesting = true;
    try {
      const [start, end] = await ch.request(MgrMsg.allocateIds, count);
      if (!(Number.isInteger(start) && Number.isInteger(end) && end > start)) {
        throw new Error(`the cellappmgr sent a bad id range [${start}, ${end})`);
      }
      this.#ranges.push([start, end]);
      this.#available += end - start;
      this.highWater = Math.max(this.highWater, end - 1);
    } finally {
      this.#requesting = false;
    }
  }
}
