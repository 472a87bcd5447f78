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
 * Runs the bots' moves as the Colyseus peer's harness does (docs/benchmarks.md, "Players and capacity"): group g of
 * `groups` first at g / groups of the interval after the start (plus a phase of that step, drawn at random unless
 * given), then once an interval after each of its runs. An interval counts from when the group ran, as a
 * setInterval's does: a group that runs late (the process was busy) stays that much later, so the groups drift
 * away from the moments the process is busy, and never catch up in a burst, which a baseapp takes for flooding.
 * A run more than an interval late counts the whole intervals it lost in `missed`.
 */
export class MoveClock {
  readonly #groups: (() => void)[][];
  readonly #stepMs: number;
  readonly #phase: number;
  /** Per group: its timer and when its next run is due (performance.now() ms). */
  readonly #timers: (ReturnType<typeof setTimeout> | undefined)[];
  readonly #due: Float64Array;
  #running = false;
  /** Whole intervals groups lost by running more than an interval late. */
  missed = 0;
  /** Group runs done. */
  runs = 0;

  /** `phase`: where in a step (0 to 1) the first group first runs, from the start; random when not given. */
  constructor(readonly intervalMs: number, groups = 10, phase: number = Math.random()) {
    if (!(intervalMs > 0) || !Number.isInteger(groups) || groups < 1) {
      throw new Error(
        `MoveClock: interval ${intervalMs} ms and ${groups} groups; want a positive interval and 1+ groups`,
      );
    }
    if (!(phase >= 0 && phase < 1)) throw new RangeError(`MoveClock: phase ${phase}; want 0 or more and under 1`);
    this.#groups = Array.from({ length: groups }, () => []);
    this.#timers = Array.from({ length: groups }, () => undefined);
    this.#due = new Float64Array(groups);
    this.#stepMs = intervalMs / groups;
    this.#phase = phase;
  }

  /** Where in a step the first group first runs (ms after the start, below one step). */
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

  /** Starts the clock: group g first runs `phaseMs` + g steps from now. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    const now = performance.now();
    for (let g = 0; g < this.#groups.length; g++) this.#arm(g, now + this.phaseMs + g * this.#stepMs, now);
  }

  /** Stops the clock; no move runs after it. */
  stop(): void {
    this.#running = false;
    for (const t of this.#timers) clearTimeout(t);
  }

  #arm(g: number, due: number, now: number): void {
    this.#due[g] = due;
    this.#timers[g] = setTimeout(() => this.#run(g), Math.max(0, due - now));
  }

  #run(g: number): void {
    if (!this.#running) return;
    const now = performance.now(), late = now - this.#due[g];
    if (late >= this.intervalMs) this.missed += Math.floor(late / this.intervalMs);
    this.runs++;
    const list = this.#groups[g];
    for (let i = 0; i < list.length; i++) list[i]();
    this.#arm(g, now + this.intervalMs, now);
  }
}
