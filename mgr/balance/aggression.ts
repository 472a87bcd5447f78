/**
 * Each partition's aggression (docs/architecture.md, "Balancing"): how boldly it
 * moves. It grows while the partition keeps moving the same way, so a far
 * target is reached quickly, and it shrinks when the partition turns back, so
 * an overshoot is followed by a smaller step and the partition settles
 * instead of swinging around its target.
 */
import type { BalanceOptions } from "./types.ts";

/** Factor applied to a partition's aggression when it moves the same way as last time. */
export const AGGRESSION_GROW = 1.25;
/** Factor applied when it moves back the way it came. */
export const AGGRESSION_SHRINK = 0.5;

/** What the balancer remembers of one partition. */
export interface PartitionState {
  /** The partition's key: its axis and the cell ids on each side (see partitionKey). */
  key: string;
  aggression: number;
  /** The way it last moved: -1 toward its left (lower) side, 1 toward its right, 0 never moved. */
  direction: -1 | 0 | 1;
  /** How many times it has turned back. */
  reversals: number;
}

/**
 * The key of a partition: it stays the same while the tree changes elsewhere
 * (a cell added or removed under another partition), so its state survives.
 */
export function partitionKey(axis: "x" | "z", leftIds: readonly number[], rightIds: readonly number[]): string {
  const ids = (a: readonly number[]) => [...a].sort((p, q) => p - q).join(",");
  return `${axis}:${ids(leftIds)}|${ids(rightIds)}`;
}

/** The aggression of every partition of one space, keyed by partitionKey. */
export class AggressionTable {
  readonly #options: BalanceOptions;
  readonly #states = new Map<string, PartitionState>();

  constructor(options: BalanceOptions) {
    this.#options = options;
  }

  /** The aggression a move of `key` in `direction` would use now. */
  peek(key: string, direction: -1 | 1): number {
    const s = this.#states.get(key);
    if (!s) return this.#clamp(this.#options.aggression);
    if (s.direction === direction) return this.#clamp(s.aggression * AGGRESSION_GROW);
    if (s.direction === -direction) return this.#clamp(s.aggression * AGGRESSION_SHRINK);
    return s.aggression;
  }

  /** Records that `key` moved in `direction` with aggression `aggression` (from peek). */
  commit(key: string, direction: -1 | 1, aggression: number): void {
    const s = this.#states.get(key);
    const reversals = (s?.reversals ?? 0) + (s && s.direction === -direction ? 1 : 0);
    this.#states.set(key, { key, aggression, direction, reversals });
  }

  /** Forgets the partitions not in `keys` (they no longer exist). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const k of [...this.#states.keys()]) if (!keys.has(k)) this.#states.delete(k);
  }

  /** The remembered state of every partition that has moved. */
  states(): PartitionState[] {
    return [...this.#states.values()].map((s) => ({ ...s }));
  }

  /** The state of one partition, if it has moved. */
  get(key: string): PartitionState | undefined {
    const s = this.#states.get(key);
    return s && { ...s };
  }

  #clamp(a: number): number {
    return Math.min(this.#options.maxAggression, Math.max(this.#options.minAggression, a));
  }
}
