import assert from "node:assert/strict";
import { type HashClaim, HashQueue, QueueFullError } from "../../base/login/hash_queue.ts";

/** A task the test finishes by hand; `order` records starts. */
function gate(order: string[], name: string): { task: () => Promise<string>; finish(): void } {
  let finish!: () => void;
  const done = new Promise<void>((r) => finish = r);
  return {
    task: async () => {
      order.push(name);
      await done;
      return name;
    },
    finish: () => finish(),
  };
}

/** Lets settled promises run their reactions. */
const turn = () => new Promise((r) => setTimeout(r, 0));

const clean = (key: string): HashClaim => ({ key, suspect: false });
const suspect = (key: string): HashClaim => ({ key, suspect: true });

Deno.test("hash queue: no more than `concurrency` tasks run at once, and every task runs", async () => {
  const q = new HashQueue({ concurrency: 2, maxWaiting: 10 });
  let running = 0, peak = 0;
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) =>
    q.run(clean(`a${i}`), async () => {
      peak = Math.max(peak, ++running);
      await turn();
      running--;
      return i;
    })));
  assert.deepEqual(results, [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.equal(peak, 2);
  assert.equal(q.stats.started, 8);
  assert.equal(q.running + q.waiting, 0);
});

Deno.test("hash queue: beyond maxWaiting an arrival is refused at once; a failed task frees its slot", async () => {
  const order: string[] = [];
  const q = new HashQueue({ concurrency: 1, maxWaiting: 2 });
  const g = ["r", "w1", "w2"].map((n) => gate(order, n));
  const ps = g.map((x, i) => q.run(clean(`k${i}`), x.task));
  assert.equal(q.running, 1);
  assert.equal(q.waiting, 2);
  await assert.rejects(q.run(clean("late"), () => Promise.resolve("never")), QueueFullError);
  await assert.rejects(q.run(clean("late"), () => Promise.resolve("never")), /the server is busy/);
  assert.equal(q.stats.refused, 2);
  for (const x of g) x.finish();
  assert.deepEqual(await Promise.all(ps), ["r", "w1", "w2"]);
  await assert.rejects(q.run(clean("x"), () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await q.run(clean("y"), () => Promise.resolve("after")), "after");
  assert.equal(q.running + q.waiting, 0);
});

Deno.test("hash queue: clean attempts before suspect ones; an address with fewer queued goes first", async () => {
  const order: string[] = [];
  const q = new HashQueue({ concurrency: 1, maxWaiting: 10 });
  const first = gate(order, "first");
  const runs = [q.run(clean("x"), first.task)];
  const gates: ReturnType<typeof gate>[] = [];
  const add = (claim: HashClaim, name: string) => {
    const g = gate(order, name);
    gates.push(g);
    runs.push(q.run(claim, g.task));
  };
  add(suspect("attacker"), "s1");
  add(clean("busy"), "busy1");
  add(clean("busy"), "busy2");
  add(suspect("attacker"), "s2");
  add(clean("busy"), "busy3");
  add(clean("quiet"), "quiet1");
  add(clean("x"), "x2");
  first.finish();
  for (const g of gates) {
    await turn();
    g.finish();
  }
  await Promise.all(runs);
  // "quiet" had nothing queued: it goes before busy's second and third; x had one running, as busy had one waiting.
  assert.deepEqual(order, ["first", "busy1", "quiet1", "busy2", "x2", "busy3", "s1", "s2"]);
});

Deno.test("hash queue: a full queue pushes out its last suspect for a clean arrival, never the other way", async () => {
  const order: string[] = [];
  const q = new HashQueue({ concurrency: 1, maxWaiting: 2 });
  const running = gate(order, "r");
  const pr = q.run(clean("r"), running.task);
  const s1 = gate(order, "s1"), s2 = gate(order, "s2"), ok = gate(order, "ok"), other = gate(order, "other");
  const p1 = q.run(suspect("attacker"), s1.task);
  const p2 = q.run(suspect("attacker"), s2.task);
  // The attacker's third waits behind its own two: no room for it.
  await assert.rejects(q.run(suspect("attacker"), () => Promise.resolve("no")), QueueFullError);
  const pok = q.run(clean("player"), ok.task);
  await assert.rejects(p2, QueueFullError, "the later suspect made room");
  const pother = q.run(clean("other"), other.task);
  await assert.rejects(p1, QueueFullError);
  assert.equal(q.stats.evicted, 2);
  // Full of clean attempts: a suspect is refused, and so is a clean one that would run after both.
  await assert.rejects(q.run(suspect("attacker"), () => Promise.resolve("no")), QueueFullError);
  await assert.rejects(q.run(clean("player"), () => Promise.resolve("no")), QueueFullError);
  assert.equal(q.stats.refused, 3);
  for (const g of [running, ok, other, s1, s2]) g.finish();
  assert.deepEqual(await Promise.all([pr, pok, pother]), ["r", "ok", "other"]);
  assert.deepEqual(order, ["r", "ok", "other"]);
  assert.equal(q.running + q.waiting, 0);
});
