/** The autosave schedule: each entity once per period, the entities spread over the period. */
import assert from "node:assert/strict";
import { Autosave, type Savable } from "../../base/persist/autosave.ts";
import { silentLogger } from "../../core/log.ts";
import { waitFor } from "../../testing/wait.ts";

Deno.test("autosave saves each entity once per period, spread over the period rather than all at once", async () => {
  const periodMs = 500;
  const auto = new Autosave(periodMs, silentLogger);
  try {
    const start = performance.now();
    const saves = new Map<number, number[]>();
    const entities: Savable[] = Array.from({ length: 40 }, (_, i) => ({
      id: i + 1,
      autosave: () => {
        saves.get(i + 1)!.push(performance.now() - start);
        return Promise.resolve();
      },
    }));
    for (const e of entities) {
      saves.set(e.id, []);
      auto.add(e);
    }
    await waitFor("every entity saved twice", () => [...saves.values()].every((s) => s.length >= 2), 3 * periodMs);
    const firsts = [...saves.values()].map((s) => s[0]);
    // One look per tenth of a period: spread saves fall into several of them, not one.
    const steps = new Set(firsts.map((t) => Math.floor(t / (periodMs / 10))));
    assert.ok(steps.size >= 5, `first saves spread over ${steps.size} steps: ${firsts.map(Math.round)}`);
    for (const [id, s] of saves) {
      const gap = s[1] - s[0];
      assert.ok(gap > periodMs * 0.8 && gap < periodMs * 2, `entity ${id} saved again after ${gap} ms`);
    }
    auto.remove(entities[0]);
    assert.equal(auto.size, 39);
  } finally {
    auto.close();
  }
});

Deno.test("a failed autosave is logged with the entity's id, and the schedule goes on", async () => {
  const lines: string[] = [];
  const log = { ...silentLogger, error: (m: string) => lines.push(m) };
  const auto = new Autosave(100, log);
  try {
    let calls = 0;
    auto.add({
      id: 7,
      autosave: () => {
        calls++;
        return Promise.reject(new Error("database is full"));
      },
    });
    await waitFor("two attempts", () => calls >= 2, 2000);
    assert.match(lines[0], /autosave of entity 7 failed: database is full/);
  } finally {
    auto.close();
  }
});
