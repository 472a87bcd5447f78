/**
 * The witness's priority queue (seed 000): an array min-heap on `priority`, smallest first. The priorities are
 * mirrored in a Float64Array beside the items, so that sifting compares contiguous numbers instead of touching
 * every cache object on the way (the caches of a thousand witnesses do not fit in the CPU caches). No allocation
 * once the arrays have grown to the AoI's size.
 */

/** Something with a priority. */
export interface Prioritised {
  priority: number;
}

/** An array min-heap on `priority` (read when an item is pushed; change it only while the item is out). */
export class PriorityHeap<T extends Prioritised> {
  readonly items: T[] = [];
  #prio = new Float64Array(64);
  size = 0;

  /** The smallest, or undefined when empty. */
  peek(): T | undefined {
    return this.size > 0 ? this.items[0] : undefined;
  }

  /** The smallest priority (Infinity when empty). */
  get minPriority(): number {
    return this.size > 0 ? this.#prio[0] : Infinity;
  }

  /** Adds an item. */
  push(x: T): void {
    if (this.size === this.#prio.length) {
      const next = new Float64Array(this.#prio.length * 2);
      next.set(this.#prio);
      this.#prio = next;
    }
    const a = this.items, pr = this.#prio;
    let i = this.size++;
    const p = x.priority;
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

  /** Removes and returns the smallest; the heap must not be empty. */
  pop(): T {
    const a = this.items;
    const top = a[0];
    const n = --this.size;
    if (n > 0) this.#siftDown(a[n], this.#prio[n], 0, n);
    return top;
  }

  /** Removes everything. */
  clear(): void {
    this.items.length = 0;
    this.size = 0;
  }

  /** Rebuilds the heap after priorities changed in place. */
  heapify(): void {
    const a = this.items, n = this.size;
    for (let i = 0; i < n; i++) this.#prio[i] = a[i].priority;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.#siftDown(a[i], this.#prio[i], i, n);
  }

  /** Removes an item wherever it is (O(n) to find it); false when absent. */
  remove(x: T): boolean {
    const a = this.items;
    const i = a.indexOf(x);
    if (i < 0 || i >= this.size) return false;
    const n = --this.size;
    if (i < n) {
      a[i] = a[n];
      this.heapify();
    }
    return true;
  }

  #siftDown(x: T, p: number, i: number, n: number): void {
    const a = this.items, pr = this.#prio;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && pr[c + 1] < pr[c]) c++;
      if (pr[c] >= p) break;
      a[i] = a[c];
      pr[i] = pr[c];
      i = c;
    }
    a[i] = x;
    pr[i] = p;
  }
}
