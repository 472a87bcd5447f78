/**
 * How the bots walk and when they send: a walker per bot (its position and
 * heading in a square), and one clock that drives every bot's moves from a
 * single timer in send groups, so a process running thousands of bots pays for
 * one timer, not one per bot.
 */

/** A square to walk in, metres. */
export interface WalkArea {
  minX: number;
  maxX: number;
  minZ: number;
  maxZ: number;
}

/**
 * One bot's walk. "wander": the heading drifts a little every step and turns back at the square's edge.
 * "peer": the Colyseus peer harness's walk: the heading holds but for a 2 % chance of a new random one per step,
 * and a step clamped at the square's edge picks a new one.
 */
export class Walker {
  heading: number = Math.random() * 2 * Math.PI;

  constructor(
    /** Where the bot is; `step` moves it (y is left alone). */
    readonly pos: { x: number; y: number; z: number },
    readonly area: WalkArea,
    /** Metres per step. */
    readonly stepM: number,
    readonly mode: "wander" | "peer",
  ) {}

  /** Takes one step. */
  step(): void {
    const pos = this.pos, area = this.area;
    let nx: number, nz: number;
    if (this.mode === "peer") {
      if (Math.random() < 0.02) this.heading = Math.random() * 2 * Math.PI;
      nx = pos.x + Math.sin(this.heading) * this.stepM;
      nz = pos.z + Math.cos(this.heading) * this.stepM;
      const cx = Math.min(area.maxX, Math.max(area.minX, nx)), cz = Math.min(area.maxZ, Math.max(area.minZ, nz));
      if (cx !== nx || cz !== nz) this.heading = Math.random() * 2 * Math.PI;
      nx = cx;
      nz = cz;
    } else {
      this.heading += (Math.random() - 0.5) * 0.6;
      nx = pos.x + Math.sin(this.heading) * this.stepM;
      nz = pos.z + Math.cos(this.heading) * this.stepM;
      if (nx < area.minX || nx > area.maxX) {
        this.heading = -this.heading;
        nx = pos.x;
      }
      if (nz < area.minZ || nz > area.maxZ) {
        this.heading = Math.PI - this.heading;
        nz = pos.z;
      }
    }
    pos.x = nx;
    pos.z = nz;
  }
}

/**
 * Runs the bots' moves: group g of `groups` at offset g / groups of the interval, on one clock, from one timer.
 * The clock's slots start at a phase of the step drawn at random (or given): the server's tick is on a beat of
 * its own, and a fixed phase against it would hold every run of a process to the same waits for the tick
 * (docs/benchmarks.md, "Players and capacity"). A late process runs the late groups as soon as it can, all
 * in one go; one more than an interval behind runs only the last interval's groups and skips the older slots
 * (counted in `missed`) rather than sending a bot's missed moves in a burst, which a baseapp takes for flooding.
 */
export class MoveClock {
  readonly #groups: (() => void)[][];
  readonly #stepMs: number;
  #slot = 0;
  #origin = 0;
  readonly #phase: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running = false;
  /** Group runs skipped because the process was more than an interval behind. */
  missed = 0;
  /** Group runs done. */
  runs = 0;

  /** `phase`: where in a step (0 to 1) the slots fall, from the start; random when not given. */
  constructor(readonly intervalMs: number, groups = 10, phase: number = Math.random()) {
    if (!(intervalMs > 0) || !Number.isInteger(groups) || groups < 1) {
      throw new Error(
        `MoveClock: interval ${intervalMs} ms and ${groups} groups; want a positive interval and 1+ groups`,
      );
    }
    if (!(phase >= 0 && phase < 1)) throw new RangeError(`MoveClock: phase ${phase}; want 0 or more and under 1`);
    this.#groups = Array.from({ length: groups }, () => []);
    this.#stepMs = intervalMs / groups;
    this.#phase = phase;
  }

  /** Where in a step the slots fall (ms after the start, below one step). */
  get phaseMs(): number {
    return this.#phase * this.#stepMs;
  }

  /** Adds a bot's move to group `group` (taken modulo the group count); returns a function that removes it. */
  add(group: number, move: () => void): () => void {
    const list = this.#groups[group % this.#groups.length];
    list.push(move);
    return () => {
      const i = list.indexOf(move);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Starts the clock: its first slot is `phaseMs` from now. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#origin = performance.now() + this.phaseMs;
    this.#slot = 0;
    this.#schedule();
  }

  /** Stops the clock; no move runs after it. */
  stop(): void {
    this.#running = false;
    clearTimeout(this.#timer);
  }

  #schedule(): void {
    this.#timer = setTimeout(
      () => this.#run(),
      Math.max(0, this.#origin + this.#slot * this.#stepMs - performance.now()),
    );
  }

  #run(): void {
    if (!this.#running) return;
    const groups = this.#groups.length;
    // Every slot whose time has come runs now, in order: a late process catches up in one go instead of one slot
    // per turn of the event loop. Only the last round is caught up: each bot sends at most once per slot it had.
    const due = Math.floor((performance.now() - this.#origin) / this.#stepMs);
    if (due - this.#slot >= groups) {
      this.missed += due - groups + 1 - this.#slot;
      this.#slot = due - groups + 1;
    }
    for (; this.#slot <= due; this.#slot++) {
      const list = this.#groups[this.#slot % groups];
      this.runs++;
      for (let i = 0; i < list.length; i++) list[i]();
    }
    this.#schedule();
  }
}
