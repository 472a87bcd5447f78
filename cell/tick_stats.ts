import { Buckets, TICK_BUCKETS } from "../core/metrics.ts";

/**
 * A cell's tick figures: the share of the tick budget it spends (smoothed),
 * the measured tick rate and tick time percentiles over recent ticks.
 */
export class TickStats {
  /** Durations (ms) of the most recent ticks, a ring. */
  #durations: Float64Array;
  /** Start times (performance.now) of the most recent ticks, a ring. */
  #starts: Float64Array;
  #count = 0;
  #next = 0;
  #sorted: Float64Array;
  /** Smoothed share of the budget spent. */
  load = 0;
  /** Every tick's time (s) since the cell began, for the metrics' histogram. */
  readonly histogram: Buckets = new Buckets(TICK_BUCKETS);

  constructor(readonly budgetMs: number, size = 128, readonly smoothing = 0.1) {
    this.#durations = new Float64Array(size);
    this.#starts = new Float64Array(size);
    this.#sorted = new Float64Array(size);
  }

  /** Records one tick that started at `start` and took `ms`. */
  record(start: number, ms: number): void {
    this.#durations[this.#next] = ms;
    this.#starts[this.#next] = start;
    this.#next = (this.#next + 1) % this.#durations.length;
    if (this.#count < this.#durations.length) this.#count++;
    this.load += (ms / this.budgetMs - this.load) * this.smoothing;
    this.histogram.observe(ms / 1000);
  }

  /** Ticks per second over the last `windowMs` (by default 3 s). */
  rate(now = performance.now(), windowMs = 3000): number {
    let n = 0;
    let oldest = now;
    for (let i = 0; i < this.#count; i++) {
      const s = this.#starts[i];
      if (now - s <= windowMs) {
        n++;
        if (s < oldest) oldest = s;
      }
    }
    if (n < 2) return 0;
    return ((n - 1) * 1000) / (now - oldest);
  }

  /** The tick time (ms) below which a share `q` of recent ticks fall. */
  percentile(q: number): number {
    if (this.#count === 0) return 0;
    const s = this.#sorted.subarray(0, this.#count);
    s.set(this.#durations.subarray(0, this.#count));
    s.sort();
    return s[Math.min(this.#count - 1, Math.floor(q * this.#count))];
  }
}
