/**
 * A cell that left its space's tree: its offload check hands its reals over, and once it has held none for a while
 * it goes. The while is so that messages sent to its reals before their senders knew are still sent on to where
 * they went.
 */

/** How long (cell time) a cell that left the tree stays after its last real went. */
const RETIRED_LINGER_MS = 1000;

/** When a cell that left its space's tree goes. */
export class Retirement {
  /** Cell time since when the cell has held no real (NaN while it holds some, or is in the tree). */
  #emptySince = NaN;
  #gone = false;

  /** The cell is in the tree (again): a later departure waits from its own emptying. */
  inTree(): void {
    this.#emptySince = NaN;
  }

  /**
   * Whether the cell, out of the tree and holding `reals` reals at cell time `now`, goes now: once it has held
   * none for RETIRED_LINGER_MS. True once.
   */
  due(reals: number, now: number): boolean {
    if (this.#gone) return false;
    if (reals > 0) {
      this.#emptySince = NaN;
      return false;
    }
    if (Number.isNaN(this.#emptySince)) this.#emptySince = now;
    if (now - this.#emptySince < RETIRED_LINGER_MS) return false;
    this.#gone = true;
    return true;
  }
}
