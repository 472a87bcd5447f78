/**
 * The chaos benchmark's players: SDK clients that stand in the space and
 * raise their avatar's counter every `raiseEvery` seconds, and count what a
 * fault does to them: a counter seen lower than it was seen before (a raise
 * seen confirmed, then undone), raises answered with an error, lost
 * connections the SDK resumed by itself, and ones it could not.
 */
import { errorText } from "../../core/errors.ts";
import { type Client, connect } from "../../client/client.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import { C2S, ErrorCode } from "../../core/proto/mod.ts";

/** The errors that answer a raise the server did not carry out because of a fault. */
const RAISE_ANSWERS: ReadonlySet<number> = new Set([ErrorCode.noCell, ErrorCode.callLost, ErrorCode.rateLimited]);

/** What happened to the bots while one fault was the latest. */
export interface BotTally {
  /**
   * Confirmed then undone: counter steps a bot saw and then saw taken back (sampled once a raise period), summed over
   * drops of (highest seen − the lower value).
   */
  undone: number;
  /** The largest single drop any bot saw. */
  maxDrop: number;
  /**
   * Raises that never showed in the counter (also those a restored counter silently took back, which a client
   * that is not sent the lower value cannot see drop): summed over bots, and the most of one bot.
   */
  unreflected: number;
  maxUnreflected: number;
  /** Raises the server answered with an error (no cell entity while it is restored, a call lost with its cellapp). */
  answered: number;
  /** Lost connections taken back with the resume token. */
  resumed: number;
  /** Lost connections the SDK gave up on. */
  closed: number;
  /** Milliseconds from the tally's start to each resume. */
  resumeMs: number[];
}

/** A new, empty tally starting now. */
export function newTally(): BotTally & { since: number } {
  return {
    undone: 0,
    maxDrop: 0,
    unreflected: 0,
    maxUnreflected: 0,
    answered: 0,
    resumed: 0,
    closed: 0,
    resumeMs: [],
    since: performance.now(),
  };
}

/** One bot's raises against what it saw of its counter. */
interface Progress {
  /** Raises sent. */
  sent: number;
  /** The counter when it first saw it, and at the latest sample. */
  base: number;
  seen: number;
  /** Raises not reflected in the counter, taken just before a raise (the previous one had a period to show). */
  missing: number;
  /** `missing` when the current tally began. */
  mark: number;
}

/** The bots of one run. */
export class CounterBots {
  readonly clients: Client[] = [];
  /** The baseapp client URL each bot is connected to now (it may resume on another). */
  readonly urlOf = new Map<Client, string>();
  /** The tally events go to now (the benchmark starts a new one at each fault). */
  tally: BotTally & { since: number } = newTally();
  readonly #progress: Progress[] = [];
  readonly #samplers: (() => void)[] = [];
  /** Raises the SDK refused (the connection was down): counted, not lost progress. */
  raiseErrors = 0;
  /** Logins that failed, with why. */
  readonly loginErrors: string[] = [];
  readonly #timers: ReturnType<typeof setInterval>[] = [];

  constructor(
    private readonly o: {
      urls: string[];
      registry: EntityRegistry;
      spaceId: number;
      bounds: [number, number, number, number];
      raiseEvery: number;
      random: () => number;
      prefix: string;
    },
  ) {}

  /** Logs `count` bots in (a few at a time) and starts their raising. */
  async start(count: number): Promise<void> {
    const queue = Array.from({ length: count }, (_, i) => i);
    await Promise.all(Array.from({ length: Math.min(10, count) }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) await this.#one(i);
    }));
  }

  async #one(i: number): Promise<void> {
    const [x0, z0, x1, z1] = this.o.bounds;
    const position = {
      x: x0 + 5 + this.o.random() * (x1 - x0 - 10),
      y: 0,
      z: z0 + 5 + this.o.random() * (z1 - z0 - 10),
    };
    let c: Client;
    const url = this.o.urls[i % this.o.urls.length];
    try {
      c = await connect(
        url,
        { name: `${this.o.prefix}${i}`, password: "bot", spaceId: this.o.spaceId, position },
        { registry: this.o.registry, resume: { urls: this.o.urls, withinMs: 60_000 } },
      );
    } catch (e) {
      this.loginErrors.push(`${this.o.prefix}${i}: ${errorText(e)}`);
      return;
    }
    this.clients.push(c);
    this.urlOf.set(c, url);
    // After a resume the player is made anew from its base and reads its cell properties at their defaults until
    // its new witness sends them: a value not received yet is not a value seen.
    let received = true;
    c.on("playerProperty", (name) => {
      if (name === "counter") received = true;
    });
    const counter = () => received && typeof c.player.props.counter === "number" ? c.player.props.counter : null;
    const progress: Progress = { sent: 0, base: counter() ?? 0, seen: counter() ?? 0, missing: 0, mark: 0 };
    this.#progress.push(progress);
    let highest = progress.seen;
    // Sampled once a raise period, before the next raise: the previous one had the period to show.
    const sample = () => {
      const v = counter();
      if (v === null) return;
      if (v < highest) {
        this.tally.undone += highest - v;
        this.tally.maxDrop = Math.max(this.tally.maxDrop, highest - v);
      }
      highest = v;
      progress.seen = v;
      progress.missing = progress.sent - (v - progress.base);
    };
    this.#samplers.push(sample);
    c.on("resumed", (to) => {
      received = false;
      this.urlOf.set(c, to);
      this.tally.resumed++;
      this.tally.resumeMs.push(performance.now() - this.tally.since);
    });
    c.on("error", (code, _message, about) => {
      if (about === C2S.callCell && RAISE_ANSWERS.has(code)) this.tally.answered++;
    });
    c.on("close", (code) => {
      if (code !== 1000) this.tally.closed++;
    });
    const first = setTimeout(() => {
      this.#timers.push(setInterval(() => {
        if (c.closed) return;
        sample();
        try {
          c.callCell(null, "raiseCounter");
          progress.sent++;
        } catch {
          this.raiseErrors++;
        }
      }, this.o.raiseEvery * 1000));
    }, this.o.random() * this.o.raiseEvery * 1000);
    this.#timers.push(first);
  }

  /** Starts a new tally (a fault begins): the raises gone missing since the previous one go to that one. */
  nextTally(): BotTally & { since: number } {
    this.#closeTally();
    this.tally = newTally();
    return this.tally;
  }

  #closeTally(): void {
    for (const p of this.#progress) {
      const d = p.missing - p.mark;
      if (d > 0) {
        this.tally.unreflected += d;
        this.tally.maxUnreflected = Math.max(this.tally.maxUnreflected, d);
      }
      p.mark = p.missing;
    }
  }

  /** How many bots are connected to the baseapp at `url`. */
  on(url: string): number {
    let n = 0;
    for (const u of this.urlOf.values()) if (u === url) n++;
    return n;
  }

  /** Bots whose connection is open at the end. */
  connected(): number {
    return this.clients.filter((c) => !c.closed).length;
  }

  /** Stops raising; a raise period later, closes the last tally with what the counters show then. */
  async stopRaising(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#timers.length = 0;
    await new Promise((r) => setTimeout(r, this.o.raiseEvery * 1000));
    for (const sample of this.#samplers) sample();
    this.#closeTally();
  }

  /** Stops raising, logs every bot out (closes those that do not answer in time). */
  async stop(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    await Promise.race([
      Promise.allSettled(this.clients.map((c) => c.logout())),
      new Promise((r) => setTimeout(r, 10_000)),
    ]);
    for (const c of this.clients) c.close();
  }
}
