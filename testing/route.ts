/**
 * How messages travel between the cells of the in-memory harness (two_cells.ts): in order, or through chaos.
 *
 * Without a seed every message is delivered in the order sent, after every cell ticked, and a request is answered
 * as it is delivered. With a seed (core/random.ts seededRandom, so a failure replays from it) the route behaves as
 * the network may: each message, reply included, waits a random number of rounds; links (sender address to
 * receiver address: between cellapps, or a cellapp's loopback to itself) are ordered and exactly-once like a TCP
 * channel, but nothing orders two links, so a message overtakes one sent earlier on another link. Within a link,
 * only the messages the protocol declares order-free (ghost batches, batch announcements) may overtake others, and
 * only those it declares idempotent (batches, announcements, resync requests, moves of a real) are sometimes
 * delivered twice. Continuations of answered requests run between deliveries at random, as they do between frames
 * of different reads.
 */
import { seededRandom } from "../core/random.ts";

/** The chaos to route through. */
export interface ChaosOptions {
  /** Seed of every random choice. */
  seed: number;
  /** A message waits 0 to this many rounds (a round is one tick of every cell). Default 3. */
  maxDelay?: number;
  /** Chance that an idempotent message is delivered twice. Default 0.15. */
  duplicate?: number;
}

/** Messages that may overtake others on their link. */
const ORDER_FREE = new Set(["ghostSync", "ghostSeq"]);
/** Messages the protocol must take twice without harm. */
const IDEMPOTENT = new Set(["ghostSync", "ghostSeq", "ghostResync", "realMoved"]);

interface Envelope {
  name: string;
  from: string;
  to: string;
  due: number;
  ordered: boolean;
  run: () => void;
}

/** The route between the harness's cells. */
export class Route {
  /** Every message delivered so far, as [name, from address, to address]. */
  readonly delivered: [string, string, string][] = [];
  #queue: Envelope[] = [];
  #round = 0;
  readonly #rng: (() => number) | null;
  readonly #maxDelay: number;
  readonly #duplicate: number;

  constructor(chaos?: ChaosOptions) {
    this.#rng = chaos ? seededRandom(chaos.seed) : null;
    this.#maxDelay = chaos?.maxDelay ?? 3;
    this.#duplicate = chaos?.duplicate ?? 0.15;
  }

  /** Whether messages go through chaos. */
  get chaotic(): boolean {
    return this.#rng !== null;
  }

  /** Sends a one-way message: `run` delivers it. */
  send(name: string, from: string, to: string, run: () => void): void {
    this.#post(name, from, to, run);
    if (this.#rng && IDEMPOTENT.has(name) && this.#rng() < this.#duplicate) this.#post(name, from, to, run);
  }

  /** Sends a request: `run` answers it where it arrives; the answer travels back on the reverse link. */
  ask<R>(name: string, from: string, to: string, run: () => R): Promise<Awaited<R>> {
    return new Promise((resolve, reject) =>
      this.#post(name, from, to, () => {
        if (!this.#rng) {
          try {
            resolve(run() as Awaited<R>);
          } catch (e) {
            reject(e);
          }
          return;
        }
        let answer: Promise<Awaited<R>>;
        try {
          answer = Promise.resolve(run()) as Promise<Awaited<R>>;
        } catch (e) {
          answer = Promise.reject(e);
        }
        answer.then(
          (v) => this.#post(`${name} reply`, to, from, () => resolve(v)),
          (e) => this.#post(`${name} error`, to, from, () => reject(e)),
        );
      })
    );
  }

  /** Delivers what is due this round (in order without chaos: everything), then lets answers settle. */
  async round(): Promise<void> {
    if (!this.#rng) return await this.flush();
    await this.#deliver(false);
    this.#round++;
  }

  /** Delivers everything sent so far, and what that sends in turn, then lets answers settle. */
  async flush(): Promise<void> {
    if (!this.#rng) {
      while (this.#queue.length) this.#take(0).run();
      await settle();
      return;
    }
    await this.#deliver(true);
  }

  #post(name: string, from: string, to: string, run: () => void): void {
    const delay = this.#rng ? Math.floor(this.#rng() * (this.#maxDelay + 1)) : 0;
    this.#queue.push({ name, from, to, due: this.#round + delay, ordered: !ORDER_FREE.has(name), run });
  }

  #take(i: number): Envelope {
    const [m] = this.#queue.splice(i, 1);
    this.delivered.push([m.name, m.from, m.to]);
    return m;
  }

  /** Chaos: delivers due messages (all, when `all`) in a random order that keeps each link's ordered ones in order. */
  async #deliver(all: boolean): Promise<void> {
    const rng = this.#rng!;
    for (let guard = 0; guard < 1_000_000; guard++) {
      const ready: number[] = [];
      const blocked = new Set<string>();
      for (let i = 0; i < this.#queue.length; i++) {
        const m = this.#queue[i];
        const link = `${m.from}>${m.to}`;
        if (m.ordered && blocked.has(link)) continue;
        if (m.ordered) blocked.add(link);
        if (all || m.due <= this.#round) ready.push(i);
      }
      if (ready.length === 0) {
        // Continuations may send more; if they do not, what is left waits behind messages not due yet.
        const before = this.#queue.length;
        await settle();
        if (this.#queue.length === before) return;
        continue;
      }
      this.#take(ready[Math.floor(rng() * ready.length)]).run();
      if (rng() < 0.3) await continuations();
    }
    throw new Error("the route never drained: messages keep making messages");
  }
}

/** Lets promise continuations (answers to requests) run, as a real event loop would between reads. */
function settle(): Promise<void> {
  return new Promise((r) => setTimeout(r, 0));
}

/** Lets the continuations of what was just delivered run (in memory, they need no more than microtasks). */
async function continuations(): Promise<void> {
  for (let i = 0; i < 32; i++) await Promise.resolve();
}
