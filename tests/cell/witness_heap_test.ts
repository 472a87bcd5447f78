/**
 * The witness's priority queue (cell/witness/priority_queue.ts): equal priorities come out in the order a textbook
 * binary heap gives them, since which entities a tick's budget reaches depends on it, whatever the heap does to be
 * fast; and a lone last child (no sibling) is still compared.
 */
import assert from "node:assert/strict";
import { SlotHeap } from "../../cell/witness/priority_queue.ts";

/** The textbook array min-heap, sift-down with a branch on the smaller child: the order the witness's must keep. */
class ReferenceHeap {
  items: number[] = [];
  prio: number[] = [];

  push(x: number, p: number): void {
    let i = this.items.length;
    this.items.push(x);
    this.prio.push(p);
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (this.prio[up] <= p) break;
      this.items[i] = this.items[up];
      this.prio[i] = this.prio[up];
      i = up;
    }
    this.items[i] = x;
    this.prio[i] = p;
  }

  pop(): number {
    const a = this.items, pr = this.prio, top = a[0];
    const x = a.pop()!, p = pr.pop()!, n = a.length;
    if (n === 0) return top;
    let i = 0;
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
    return top;
  }
}

Deno.test("the witness's heap pops what a textbook heap pops, ties and lone last children included", () => {
  let seed = 99;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const heap = new SlotHeap(), ref = new ReferenceHeap();
  const popped: number[] = [], expected: number[] = [];
  let slot = 0, ties = 0;
  for (let round = 0; round < 2000; round++) {
    // Few distinct priorities, so that many tie; sizes pass through every parity.
    const pushes = Math.floor(rnd() * 7), pops = Math.floor(rnd() * 7);
    for (let k = 0; k < pushes; k++) {
      const p = Math.floor(rnd() * 8);
      heap.push(slot, p);
      ref.push(slot++, p);
    }
    for (let k = 0; k < pops && ref.items.length > 0; k++) {
      if (ref.items.length > 1 && ref.prio[1] === ref.prio[0]) ties++;
      assert.equal(heap.minPriority, ref.prio[0]);
      popped.push(heap.pop());
      expected.push(ref.pop());
    }
    assert.equal(heap.size, ref.items.length);
  }
  assert.ok(ties > 100, `the test should pop many ties (${ties})`);
  assert.deepEqual(popped, expected);
});

Deno.test("a heap emptied and refilled keeps its order (the vacated end's sentinel is overwritten)", () => {
  const heap = new SlotHeap();
  for (let i = 0; i < 5; i++) heap.push(i, 5 - i);
  const first: number[] = [];
  while (heap.size > 0) first.push(heap.pop());
  assert.deepEqual(first, [4, 3, 2, 1, 0]);
  heap.push(7, 2);
  heap.push(8, 1);
  heap.push(9, 3);
  assert.deepEqual([heap.pop(), heap.pop(), heap.pop()], [8, 7, 9]);
  assert.equal(heap.minPriority, Infinity);
});
