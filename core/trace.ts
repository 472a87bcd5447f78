/**
 * Move tracing, for the latency breakdown of `deno task bench peer`: with SEAMLESS_TRACE_DIR set, each process
 * notes when a sampled entity's move passes its stages (the baseapp got it, the cellapp got it, a witness wrote
 * it) and when its ticks began, and appends the notes to a file of its own in that folder once a second. The
 * bench joins them by entity and position with the times its bots sent and first saw each move. Processes on one
 * machine share its clock, so wall-clock times (performance.timeOrigin + now) compare across them.
 */
import { errorText } from "./errors.ts";

/** Where a move was seen: "sent" and "seen" come from the bots, the rest from the servers. */
export type TraceStage = "sent" | "baseapp" | "cellapp" | "tick" | "witness" | "seen";

/**
 * Moments of a batch of client frames, not of one entity: a cellapp closed a batch for a baseapp ("batched"), a
 * baseapp began relaying a batch to its clients ("relaying"), handed the last frame of it to their connections
 * ("relayed") and had written them all to the sockets ("written"). The breakdown places a move's frame in the first
 * of each after its witness wrote it.
 */
export type TraceMark = "batched" | "relaying" | "relayed" | "written";

/** Positions are compared to the millimetre: a float32 on the wire and the float64 a bot sent agree on it. */
export function traceKey(x: number): number {
  return Math.round(x * 1000);
}

/** The notes of one process; off (and free) unless enabled. */
export class MoveTrace {
  /** Whether notes are taken: checked first on every hot path. */
  on = false;
  #every = 10;
  #file = "";
  #lines: string[] = [];
  #lastWitness = new Map<number, number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Starts taking notes of entities whose id is a multiple of `every`, into `file`. */
  enable(file: string, every: number): void {
    this.on = true;
    this.#file = file;
    this.#every = Math.max(1, Math.floor(every));
    Deno.writeTextFileSync(file, "");
    const timer = setInterval(() => this.flush(), 1000);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  /** Whether entity `id` is one of the sampled ones. */
  sampled(id: number): boolean {
    return this.on && traceSampled(id, this.#every);
  }

  /** Notes that the move of entity `id` to x passed `stage` at `t` (wall-clock ms). */
  stamp(stage: TraceStage, id: number, x: number, t: number = wallClock()): void {
    this.#lines.push(`${stage} ${id} ${traceKey(x)} ${t.toFixed(3)}`);
  }

  /** Notes a witness writing entity `id` at x: only the first witness to write that position counts. */
  written(id: number, x: number): void {
    const key = traceKey(x);
    if (this.#lastWitness.get(id) === key) return;
    this.#lastWitness.set(id, key);
    this.stamp("witness", id, x);
  }

  /** Notes the start of a tick. */
  tick(t: number = wallClock()): void {
    this.#lines.push(`tick 0 0 ${t.toFixed(3)}`);
  }

  /** Notes a moment of a batch of client frames. */
  mark(what: TraceMark, t: number = wallClock()): void {
    this.#lines.push(`${what} 0 0 ${t.toFixed(3)}`);
  }

  /** Appends the notes so far to the file. */
  flush(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.join("\n") + "\n";
    this.#lines = [];
    try {
      Deno.writeTextFileSync(this.#file, text, { append: true });
    } catch (e) {
      console.error(`move trace: cannot write ${this.#file}: ${errorText(e)}; tracing stops`);
      this.stop();
    }
  }

  /** Writes what is left and stops taking notes. */
  stop(): void {
    if (this.on) this.flush();
    this.on = false;
    clearInterval(this.#timer);
  }
}

/**
 * Whether entity `id` is in a sample of one in `every`. Hashed, not `id % every`: ids follow the login order, as
 * the bots' send groups do, so a plain modulus would sample a few send groups, each at its own phase to the tick.
 */
export function traceSampled(id: number, every: number): boolean {
  let h = id | 0; // murmur3's finaliser: every bit of the id moves every bit of the hash
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return ((h ^ (h >>> 16)) >>> 0) % every === 0;
}

/** Milliseconds since the epoch, with the sub-millisecond resolution of performance.now(). */
export function wallClock(): number {
  return performance.timeOrigin + performance.now();
}

/** This process's notes. */
export const moveTrace: MoveTrace = new MoveTrace();

/**
 * Enables this process's notes when SEAMLESS_TRACE_DIR names a folder (SEAMLESS_TRACE_EVERY: the sample, one
 * entity id in that many, default 10); `name` tells the processes' files apart.
 */
export function traceFromEnv(name: string): void {
  let dir: string | undefined, every: string | undefined;
  try {
    dir = Deno.env.get("SEAMLESS_TRACE_DIR");
    every = Deno.env.get("SEAMLESS_TRACE_EVERY");
  } catch {
    return; // no permission to read the environment: no tracing
  }
  if (!dir) return;
  moveTrace.enable(`${dir}/${name}-${Deno.pid}.trace`, every ? Number(every) || 10 : 10);
}
