/**
 * A process's busy share of wall time, for the load it reports: everything it
 * does (ticks, messages between ticks, client traffic, storage, garbage
 * collection), not only the part one loop measures.
 */
import process from "node:process";

/** Samples closer together than this keep the previous figure: too short to measure. */
const MIN_SAMPLE_MS = 200;

/** CPU time of this process over wall time, smoothed; 1 = one core busy all the time. */
export class BusyMeter {
  #cpuUs: number;
  #wallMs: number;
  #value = 0;
  #primed = false;

  /** `smoothing` is the weight of each new sample (1 = no smoothing). */
  constructor(readonly smoothing = 0.5, private readonly cpuUs: () => number = processCpuUs) {
    this.#cpuUs = cpuUs();
    this.#wallMs = performance.now();
  }

  /** The busy share now: a new sample when the last is old enough, else the last figure. */
  sample(now: number = performance.now()): number {
    const wall = now - this.#wallMs;
    if (wall < MIN_SAMPLE_MS) return this.#value;
    const cpu = this.cpuUs();
    const share = Math.max(0, (cpu - this.#cpuUs) / 1000 / wall);
    this.#cpuUs = cpu;
    this.#wallMs = now;
    this.#value = this.#primed ? this.#value + (share - this.#value) * this.smoothing : share;
    this.#primed = true;
    return this.#value;
  }
}

/** CPU time this process has used so far (user and system, every thread), in µs. */
export function processCpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}
