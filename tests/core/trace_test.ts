import assert from "node:assert/strict";
import { MoveTrace, traceKey } from "../../core/trace.ts";
import { breakDown, HOPS } from "../../bench/lib/trace.ts";

Deno.test("move traces of two processes join with the bots' sightings into a breakdown by hop", () => {
  const dir = Deno.makeTempDirSync();
  try {
    const base = new MoveTrace(), cell = new MoveTrace();
    base.enable(`${dir}/baseapp-1.trace`, 10);
    cell.enable(`${dir}/cellapp-2.trace`, 10);
    const picked = [...Array(10_000).keys()].filter((id) => base.sampled(id));
    assert.ok(picked.length > 900 && picked.length < 1100, `about one id in ten, not ${picked.length}`);
    // Consecutive ids (the bots' send groups follow the login order) are picked evenly across residues.
    for (let r = 0; r < 10; r++) assert.ok(picked.filter((id) => id % 10 === r).length > 60, `residue ${r}`);
    // Entity 20 moves to x = 5.25 at t = 1000: the baseapp has it at 1001, the cellapp at 1003, the tick starts
    // at 1050, a witness writes it at 1052 (and again, which is not counted), its batch for the baseapp closes at
    // 1053 (a batch of the tick before closed at 1010), the baseapp relays it from 1055 to 1056 and has written it
    // at 1058, a bot sees it at 1060.
    base.stamp("baseapp", 20, 5.25, 1001);
    cell.stamp("cellapp", 20, 5.25, 1003);
    cell.tick(1000);
    cell.mark("batched", 1010);
    base.mark("relaying", 1011);
    base.mark("relayed", 1012);
    base.mark("written", 1013);
    cell.tick(1050);
    cell.written(20, 5.25);
    cell.written(20, 5.25);
    cell.mark("batched", 1053);
    base.mark("relaying", 1055);
    base.mark("relayed", 1056);
    base.mark("written", 1058);
    base.stop();
    cell.stop();
    const lines = Deno.readTextFileSync(`${dir}/cellapp-2.trace`).trim().split("\n");
    assert.equal(lines.filter((l) => l.startsWith("witness")).length, 1, "only the first witness to write it");
    // The witness's time was the real clock: put it where the story needs it.
    Deno.writeTextFileSync(
      `${dir}/cellapp-2.trace`,
      lines.map((l) => l.startsWith("witness") ? `witness 20 ${traceKey(5.25)} 1052.000` : l).join("\n"),
    );
    const b = breakDown(dir, [
      { id: 20, x: 5.25, sentAt: 1000, seenAt: 1060 },
      { id: 30, x: 1, sentAt: 1000, seenAt: 1070 }, // not traced by the servers
    ]);
    assert.ok(b);
    assert.equal(b.traced, 1);
    assert.equal(b.sightings, 2);
    assert.deepEqual(b.hops.map((h) => h.hop), [...HOPS]);
    assert.deepEqual(b.hops.map((h) => h.p50), [1, 2, 47, 2, 1, 2, 1, 4]);
    assert.deepEqual(b.total, { p50: 60, p99: 60 });
    // Two batches written: 1 ms and 2 ms after relayed.
    assert.deepEqual(b.writing, { p50: 2, p99: 2 });
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("no trace files: no breakdown", () => {
  const dir = Deno.makeTempDirSync();
  try {
    assert.equal(breakDown(dir, [{ id: 1, x: 0, sentAt: 0, seenAt: 1 }]), null);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
