/**
 * The witness's priority queue (docs/architecture.md, "The witness"): an array min-heap of slot numbers on their
 * priority, smallest first. Slots and priorities are kept in typed arrays side by side, so sifting compares contiguous
 * numbers instead of touching every cache record on the way. No allocation once the arrays have grown to the AoI's
 * size.
 */

/** A min-heap of non-negative integers (slots), each pushed with its priority. */
export class SlotHeap {
  #items = new Int32Array(8);
  #prio = new Float64Array(8);
  size = 0;

  /** The slot with the smallest priority, or -1 when empty. */
  peek(): number {
    return this.size > 0 ? this.#items[0] : -1;
  }

  /** The smallest priority (Infinity when empty). */
  get minPriority(): number {
    return this.size > 0 ? this.#prio[0] : Infinity;
  }

  /** Adds a slot with its priority. */
  push(x: number, p: number): void {
    if (this.size === this.#prio.length) {
      const prio = new Float64Array(this.#prio.length * 2), items = new Int32Array(prio.length);
      prio.set(this.#prio);
      items.set(this.#items);
      this.#prio = prio;
      this.#items = items;
    }
    const a = this.#items, pr = this.#prio;
    let i = this.size++;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (pr[up] <= p) break;
      a[i] = a[up];
      pr[i] = pr[up];
      i = up;
    }
    a[i] = x;
    pr[i] = p;
  }

  /** Removes and returns the slot with the smallest priority; the heap must not be empty. */
  pop(): number {
    const a = this.#items, pr = this.#prio;
    const top = a[0];
    const n = --this.size;
    if (n === 0) return top;
    // Sift the last item down from the root. The vacated end holds Infinity, so that a last child without a sibling
    // needs no bounds check, and the smaller child is picked by arithmetic: which one it is is a coin toss, and a
    // branch on it would be mispredicted half the time.
    const x = a[n], p = pr[n];
    pr[n] = Infinity;
    let i = 0;
    for (let c = 1; c < n; c = 2 * i + 1) {
      c += +(pr[c + 1] < pr[c]);
      if (pr[c] >= p) break;
      a[i] = a[c];
      pr[i] = pr[c];
      i = c;
    }
    a[i] = x;
    pr[i] = p;
    return top;
  }

  /** Visits every slot with its priority, in heap order. */
  forEach(fn: (slot: number, priority: number) => void): void {
    for (let i = 0; i < this.size; i++) fn(this.#items[i], this.#prio[i]);
  }

  /** Removes everything. */
  clear(): void {
    this.size = 0;
  }
}
