/**
 * One heartbeat clock per heartbeat period for all the channels of a process: a channel's own interval timer would
 * wake the event loop at a phase of its own, once per channel. Beats fall on multiples of the period in wall-clock
 * time, which are also tick times of a cellapp (its period divides the heartbeat's), so they share its wake-up.
 */

/** The channels beating at one period, and the timer of their next beat. */
interface Group {
  readonly beats: Set<() => void>;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Wall-clock time (ms) of the next beat. */
  next: number;
}

/** The heartbeat clocks of this process, by period (ms). */
export class HeartbeatClock {
  readonly #groups = new Map<number, Group>();

  /** Calls `beat` every `periodMs` until the returned function is called. */
  join(periodMs: number, beat: () => void): () => void {
    let g = this.#groups.get(periodMs);
    if (!g) {
      g = { beats: new Set(), timer: undefined, next: 0 };
      this.#groups.set(periodMs, g);
      this.#schedule(periodMs, g);
    }
    // A function of its own per member, so that the same `beat` joined twice leaves once per call.
    const member = () => beat();
    g.beats.add(member);
    const group = g;
    return () => {
      group.beats.delete(member);
      if (group.beats.size > 0 || this.#groups.get(periodMs) !== group) return;
      clearTimeout(group.timer);
      this.#groups.delete(periodMs);
    };
  }

  #schedule(periodMs: number, g: Group): void {
    const wall = performance.timeOrigin + performance.now();
    g.next += periodMs;
    // The first beat, or after a stall: the next multiple from now (no burst of the beats missed).
    if (g.next < wall) g.next = Math.ceil(wall / periodMs) * periodMs;
    const wait = Math.max(0, Math.ceil(g.next - wall));
    g.timer = setTimeout(() => {
      // The next beat is set first: a beat that throws fails as an interval timer's would, and the clock goes on.
      if (this.#groups.get(periodMs) === g) this.#schedule(periodMs, g);
      for (const beat of [...g.beats]) beat();
    }, wait);
  }
}

/** The process's heartbeat clocks. */
export const heartbeatClock: HeartbeatClock = new HeartbeatClock();
