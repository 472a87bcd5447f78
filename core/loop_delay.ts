/**
 * Event-loop delay, measured as how late a 100 ms timer fires. node:perf_hooks' monitorEventLoopDelay does the same
 * with a 10 ms timer, which in Deno is a JS timer: it cost each process ~1.2 % of a core doing nothing else (measured
 * idle, 10 s). A tenth of the wake-ups still catches every stall longer than the period and measures its length.
 */

/** How often the timer looks, in milliseconds. */
export const LOOP_DELAY_PERIOD_MS = 100;

/** How long `stalled` remembers a stall, in milliseconds. */
export const STALL_MEMORY_MS = 60_000;

/** Samples kept between two reads (the newest win): 1,024 periods, about 100 s. */
const KEPT = 1024;

/** Event-loop delay since the last reset: quantiles of the timer's lateness and its maximum, in seconds. */
export class LoopDelay {
  readonly #samples = new Float64Array(KEPT);
  /** Samples taken since the last reset (may exceed KEPT: the ring then holds the newest). */
  #count = 0;
  #max = 0;
  #due = 0;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The end (performance.now()) and length (ms) of the longest delay seen in the last STALL_MEMORY_MS. */
  #stallEnd = -Infinity;
  #stallMs = 0;

  /** Starts measuring; the timer does not keep the process alive. */
  start(): void {
    if (this.#timer !== undefined) return;
    this.#due = performance.now() + LOOP_DELAY_PERIOD_MS;
    const timer = setInterval(() => this.#look(), LOOP_DELAY_PERIOD_MS);
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  /** Stops measuring. */
  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Samples since the last reset. */
  get count(): number {
    return this.#count;
  }

  /** The longest delay since the last reset, in seconds. */
  get max(): number {
    return this.#max / 1000;
  }

  /** The `p`-th percentile (0-100) of the delays kept since the last reset, in seconds; 0 before any. */
  percentile(p: number): number {
    const n = Math.min(this.#count, KEPT);
    if (n === 0) return 0;
    const sorted = this.#samples.slice(0, n).sort();
    return sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))] / 1000;
  }

  /** Forgets the samples (after they were read). */
  reset(): void {
    this.#count = 0;
    this.#max = 0;
  }

  /** Records a delay of `ms`; the timer calls it, tests may too. */
  record(ms: number, now: number = performance.now()): void {
    this.#samples[this.#count % KEPT] = ms;
    this.#count++;
    if (ms > this.#max) this.#max = ms;
    if (ms >= this.#stallMs || now - this.#stallEnd > STALL_MEMORY_MS) {
      this.#stallEnd = now;
      this.#stallMs = ms;
    }
  }

  /**
   * Whether the process stalled for `ms` or longer within the last `withinMs` (up to STALL_MEMORY_MS): a stall that
   * ended then, or one it is waking from now (its timer is that late and has not fired yet, as when a message that
   * waited through the stall is handled first).
   */
  stalled(ms: number, withinMs: number, now: number = performance.now()): boolean {
    if (this.#timer !== undefined && now - this.#due >= ms) return true;
    return this.#stallMs >= ms && now - this.#stallEnd <= Math.min(withinMs, STALL_MEMORY_MS);
  }

  #look(): void {
    const now = performance.now();
    this.record(Math.max(0, now - this.#due), now);
    // The interval re-arms from when it fired: after a stall the next look is due a period from now.
    this.#due = now + LOOP_DELAY_PERIOD_MS;
  }
}
