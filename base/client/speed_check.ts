/**
 * The top-speed check of client movement: a distance budget that refills at
 * the top speed and holds at most `burstSeconds` of it, so messages bunched
 * by the network pass while a sustained or single jump beyond the speed fails.
 */

/** Position [x, y, z]. */
export type Pos = [number, number, number];

/** Verdict of one reported position. */
export type MoveVerdict = "ok" | "tooFast";

/** Checks the positions a client reports for the entity it controls. */
export class SpeedCheck {
  /** The last accepted position. */
  position: Pos;
  #budget: number;
  #at: number;

  constructor(
    readonly maxSpeed: number,
    start: Pos,
    now: number = performance.now(),
    readonly burstSeconds = 1,
    /** Metres always allowed on top (float rounding, small corrections). */
    readonly slack = 0.5,
  ) {
    this.position = [...start];
    this.#budget = this.#cap;
    this.#at = now;
  }

  get #cap(): number {
    return this.maxSpeed * this.burstSeconds + this.slack;
  }

  /** Places the entity without a check (login, a correction, a teleport by the server). */
  reset(pos: Pos, now: number = performance.now()): void {
    this.position = [...pos];
    this.#budget = this.#cap;
    this.#at = now;
  }

  /**
   * Accepts (x, y, z) when reachable at the top speed; on "tooFast" the last position stays. An accepted one is
   * written into `position` in place: this runs for every move of every client, and readers copy `position`.
   */
  check(x: number, y: number, z: number, now: number = performance.now()): MoveVerdict {
    this.#budget = Math.min(this.#cap, this.#budget + (now - this.#at) / 1000 * this.maxSpeed);
    this.#at = now;
    const at = this.position, dx = x - at[0], dy = y - at[1], dz = z - at[2];
    const d = Math.sqrt(dx * dx + dy * dy + dz * dz);
    if (!(d <= this.#budget)) return "tooFast";
    this.#budget -= d;
    at[0] = x;
    at[1] = y;
    at[2] = z;
    return "ok";
  }
}
