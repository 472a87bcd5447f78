/**
 * What the bots measure, judged from what clients see: the counter each bot
 * raises by exactly 1 (out-of-order values and gaps while in view), and the
 * time from a bot's move to another bot seeing it (matched by position
 * against the mover's recent moves, since packed positions are approximate).
 */

/** Moves of one bot: the last MOVE_HISTORY positions with their times. */
const MOVE_HISTORY = 32;
/** A seen position further than this from every recent move matches none. */
const MATCH_RADIUS = 2;

/** Recent moves of every bot, by entity id. */
export class MoveLog {
  readonly #moves = new Map<number, { seq: number; t: Float64Array; x: Float64Array; z: Float64Array }>();
  /** The newest move of each bot any observer has seen, when only first sightings count. */
  readonly #firstSeen: Map<number, number> | null;

  /**
   * `firstSightingOnly`: a move counts for latency once, when the first observer sees it. `onSighting` hears of
   * each counted sighting: who moved, to which x, and when it was sent and seen (performance.now() ms).
   */
  constructor(
    firstSightingOnly = false,
    readonly onSighting?: (id: number, x: number, sentAt: number, seenAt: number) => void,
  ) {
    this.#firstSeen = firstSightingOnly ? new Map() : null;
  }

  /** Whether move `seq` of `id` is a sighting to count (always, unless only first sightings count). */
  claim(id: number, seq: number): boolean {
    if (!this.#firstSeen) return true;
    if (seq <= (this.#firstSeen.get(id) ?? -1)) return false;
    this.#firstSeen.set(id, seq);
    return true;
  }

  /** Records that bot `id` moved to (x, z) at `t` (ms). */
  record(id: number, t: number, x: number, z: number): void {
    let m = this.#moves.get(id);
    if (!m) {
      m = {
        seq: 0,
        t: new Float64Array(MOVE_HISTORY),
        x: new Float64Array(MOVE_HISTORY),
        z: new Float64Array(MOVE_HISTORY),
      };
      this.#moves.set(id, m);
    }
    const i = m.seq % MOVE_HISTORY;
    m.t[i] = t;
    m.x[i] = x;
    m.z[i] = z;
    m.seq++;
  }

  /** Whether `id` is a bot of this run. */
  has(id: number): boolean {
    return this.#moves.has(id);
  }

  /** The move of `id` nearest to (x, z) among the recent ones: its sequence number and time, or null. */
  match(id: number, x: number, z: number): { seq: number; t: number; x: number } | null {
    const m = this.#moves.get(id);
    if (!m) return null;
    let best = -1, bestD = MATCH_RADIUS * MATCH_RADIUS;
    for (let s = m.seq - 1; s >= 0 && s >= m.seq - MOVE_HISTORY; s--) {
      const i = s % MOVE_HISTORY;
      const d = (m.x[i] - x) ** 2 + (m.z[i] - z) ** 2;
      if (d < bestD) {
        bestD = d;
        best = s;
      }
    }
    return best < 0 ? null : { seq: best, t: m.t[best % MOVE_HISTORY], x: m.x[best % MOVE_HISTORY] };
  }
}

/** Latencies in 0.25 ms buckets up to 10 s, for percentiles without keeping samples. */
export class LatencyHistogram {
  readonly #buckets = new Uint32Array(40_001);
  count = 0;

  add(ms: number): void {
    this.#buckets[Math.min(this.#buckets.length - 1, Math.max(0, Math.round(ms * 4)))]++;
    this.count++;
  }

  /** The p-th percentile (0-100) in ms, or null without samples. */
  percentile(p: number): number | null {
    if (this.count === 0) return null;
    const want = Math.ceil((p / 100) * this.count);
    let seen = 0;
    for (let i = 0; i < this.#buckets.length; i++) {
      seen += this.#buckets[i];
      if (seen >= want) return i / 4;
    }
    return null;
  }
}

/** Totals over all bots during the measurement. */
export interface BotTotals {
  enters: number;
  leaves: number;
  updates: number;
  propertyEvents: number;
  outOfOrder: number;
  gaps: number;
}

/** One bot's view: counters per entity it sees, and latency matching. */
export class Observer {
  /** The last counter value seen per entity (kept across leaves). */
  readonly #last = new Map<number, number>();
  /** The last value seen while in view since the latest enter. */
  readonly #inView = new Map<number, number>();
  /** The newest move of each mover this observer has seen. */
  readonly #seenSeq = new Map<number, number>();

  constructor(
    readonly self: number,
    private readonly totals: BotTotals,
    private readonly moves: MoveLog,
    private readonly latency: LatencyHistogram,
    private readonly measuring: () => boolean,
    /** Told of each gap and each value out of order, for a report of where they happened. */
    private readonly onViolation?: (what: "gap" | "outOfOrder", id: number, from: number, to: number) => void,
  ) {}

  /** An entity entered with its counter value (undefined when it has none). */
  enter(id: number, counter: unknown): void {
    if (this.measuring()) this.totals.enters++;
    this.#inView.delete(id);
    if (typeof counter === "number") this.#counter(id, counter);
  }

  left(id: number): void {
    if (this.measuring()) this.totals.leaves++;
    this.#inView.delete(id);
  }

  /** A property changed; `counter` is judged. */
  property(id: number, name: string, value: unknown): void {
    if (this.measuring()) {
      this.totals.propertyEvents++;
      this.totals.updates++;
    }
    if (name === "counter" && typeof value === "number") this.#counter(id, value);
  }

  /** An entity moved; a bot's move is matched to the time it was made. */
  moved(id: number, x: number, z: number, now: number): void {
    if (!this.measuring()) return;
    this.totals.updates++;
    if (id === this.self || !this.moves.has(id)) return;
    const m = this.moves.match(id, x, z);
    if (!m || m.seq <= (this.#seenSeq.get(id) ?? -1)) return;
    this.#seenSeq.set(id, m.seq);
    if (!this.moves.claim(id, m.seq)) return;
    this.latency.add(now - m.t);
    this.moves.onSighting?.(id, m.x, m.t, now);
  }

  #counter(id: number, v: number): void {
    const last = this.#last.get(id);
    const inView = this.#inView.get(id);
    // Judged over the whole run, warm-up included: a violation is one whenever it happens.
    if (last !== undefined && v < last) {
      this.totals.outOfOrder++;
      this.onViolation?.("outOfOrder", id, last, v);
    }
    if (inView !== undefined && v > inView + 1) {
      this.totals.gaps++;
      this.onViolation?.("gap", id, inView, v);
    }
    this.#last.set(id, v);
    this.#inView.set(id, v);
  }
}
