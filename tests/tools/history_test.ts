import assert from "node:assert/strict";
import type { HistoryRecord } from "../../core/history.ts";
import { HistoryLog } from "../../core/history.ts";
import {
  checkHistory,
  formatReport,
  HistoryReadError,
  parseHistory,
  type ProcessLog,
  readHistory,
} from "../../tools/history/mod.ts";

/** A hand-written process log: `beats` from..to every 100 ms, plus `lines`, in time order. */
function proc(role: string, pid: number, lines: HistoryRecord[], beats: [number, number][] = []): ProcessLog {
  const records: HistoryRecord[] = [{ t: 0, k: "open", role, pid }, ...lines];
  for (const [from, to] of beats) for (let t = from; t <= to; t += 100) records.push({ t, k: "beat" });
  records.sort((a, b) => a.t - b.t || (a.k === "open" ? -1 : b.k === "open" ? 1 : 0));
  return { file: `${role}-${pid}.jsonl`, role, pid, records };
}
const real = (t: number, id: number, g = 0): HistoryRecord => ({ t, k: "real", id, space: 1, cell: 1, g });
const unreal = (t: number, id: number, why = "handing over"): HistoryRecord => ({ t, k: "unreal", id, why });
const base = (t: number, id: number, account = ""): HistoryRecord => ({ t, k: "base", id, account });
const close = (t: number): HistoryRecord => ({ t, k: "close" });

Deno.test("a hand-over where the old real stops before the new one acts is no overlap; a planted one is caught", () => {
  const a = proc("cellapp", 1, [real(0, 1), unreal(400, 1), real(0, 2), close(1000)], [[0, 1000]]);
  const b = proc("cellapp", 2, [real(400, 1, 1), real(300, 2, 1), close(1000)], [[0, 1000]]);
  const r = checkHistory([a, b]);
  assert.equal(r.overlaps.length, 1, formatReport(r));
  const o = r.overlaps[0];
  assert.equal(o.kind, "real");
  assert.equal(o.key, "2");
  assert.equal(o.at, 300);
  assert.equal(o.ms, 700);
  assert.deepEqual([o.a.pid, o.b.pid], [1, 2]);
  assert.match(formatReport(r), /overlap: entity 2 real twice for 700\.0 ms/);
  // Within a stated tolerance it passes.
  assert.equal(checkHistory([a, b], { realToleranceMs: 700 }).overlaps.length, 0);
});

Deno.test("an entity real twice in one process is an overlap too", () => {
  const a = proc("cellapp", 1, [real(0, 7), real(200, 7), close(500)], [[0, 500]]);
  const r = checkHistory([a]);
  assert.equal(r.overlaps.length, 1);
  assert.equal(r.overlaps[0].ms, 300);
});

Deno.test("a killed process's claims end at its last line, or at the stated kill time", () => {
  // Killed at 1050 without a close line: its last beat is at 1000.
  const a = proc("cellapp", 1, [real(0, 5)], [[0, 1000]]);
  const b = proc("cellapp", 2, [real(1030, 5, 1), close(2000)], [[0, 2000]]);
  assert.equal(checkHistory([a, b]).overlaps.length, 0);
  const r = checkHistory([a, b], { kills: { 1: 1050 } });
  assert.equal(r.overlaps.length, 1, "with the kill time stated, it held entity 5 until 1050");
  assert.equal(r.overlaps[0].ms, 20);
  assert.equal(r.summary.unclosed, 1);
});

Deno.test("a stalled process acts again after the gap unless it holds its reals", () => {
  // Stopped from 1000 to 4000 (no lines); meanwhile entity 9 is restored elsewhere at 2500.
  const stopped: [number, number][] = [[0, 1000], [4100, 6000]];
  const other = proc("cellapp", 2, [real(2500, 9, 1), close(6000)], [[0, 6000]]);
  const woke = proc("cellapp", 1, [real(0, 9)], stopped);
  const r = checkHistory([woke, other]);
  assert.equal(r.summary.stalls, 1);
  assert.equal(r.overlaps.length, 1, "it acts as the real again from its first line after the stall");
  assert.equal(r.overlaps[0].at, 4100);
  // The same, but it holds its reals back at once on waking and is then fenced: no overlap.
  const fenced = proc("cellapp", 1, [real(0, 9), { t: 4050, k: "hold" }, unreal(4300, 9, "fenced")], stopped);
  assert.equal(checkHistory([fenced, other]).overlaps.length, 0, formatReport(checkHistory([fenced, other])));
  // Counting held reals as acting shows the hold as the overlap, from the hold to the fence's drop.
  const held = checkHistory([fenced, other], { heldActs: true });
  assert.deepEqual(held.overlaps.map((o) => [o.at, o.ms]), [[4050, 250]]);
  // Held, then confirmed again (unhold): it acts again.
  const back = proc("cellapp", 1, [real(0, 9), { t: 4050, k: "hold" }, { t: 4500, k: "unhold" }], stopped);
  const rb = checkHistory([back, other]);
  assert.equal(rb.overlaps.length, 1);
  assert.equal(rb.overlaps[0].at, 4500);
});

Deno.test("an account with two bases at once, and one base in two baseapps, are caught", () => {
  const a = proc("baseapp", 1, [base(0, 10, "alice"), { t: 500, k: "unbase", id: 10, why: "removed" }, close(3000)], [
    [0, 3000],
  ]);
  const b = proc("baseapp", 2, [base(600, 11, "alice"), base(100, 12, "bob"), base(100, 20), close(3000)], [[0, 3000]]);
  assert.equal(checkHistory([a, b]).overlaps.length, 0, "alice's bases one after the other");
  const c = proc("baseapp", 3, [base(1000, 13, "alice"), base(2000, 20), close(2500)], [[0, 3000]]);
  const r = checkHistory([a, b, c]);
  const kinds = r.overlaps.map((o) => `${o.kind}:${o.key}:${o.ms}`).sort();
  assert.deepEqual(kinds, ["account:alice:1500", "base:20:500"], formatReport(r));
});

Deno.test("what existed before the fault and is gone after it is lost, unless it was destroyed", () => {
  // Cellapp 1 is killed at 1000; entity 3 is lost, 4 was destroyed before, 5 is restored on cellapp 2.
  const a = proc("cellapp", 1, [real(0, 3), real(0, 4), unreal(950, 4, "destroyed"), real(0, 5)], [[0, 1000]]);
  const b = proc("cellapp", 2, [real(1500, 5, 1), real(100, 6), close(4000)], [[0, 4000]]);
  const r = checkHistory([a, b], { kills: { 1: 1000 }, loss: { before: 900, after: 3000 } });
  assert.deepEqual(r.lost.map((l) => `${l.kind}:${l.id}`), ["real:3"], formatReport(r));
  assert.equal(r.lost[0].last.why, "its process was killed");
  assert.match(formatReport(r), /lost: entity 3/);
  assert.equal(r.overlaps.length, 0);
});

Deno.test("a torn last line is dropped; any other bad line is an error naming the file and line", () => {
  const ok = parseHistory("x.jsonl", '{"t":1,"k":"open","role":"cellapp","pid":4}\n{"t":2,"k":"beat"}\n{"t":3,"k":"be');
  assert.equal(ok.records.length, 2);
  assert.equal(ok.pid, 4);
  assert.throws(
    () => parseHistory("y.jsonl", '{"t":1,"k":"open","role":"cellapp","pid":4}\n{"t":2,"k":"nonsense"}\n'),
    (e: Error) => e instanceof HistoryReadError && /y\.jsonl:2/.test(e.message),
  );
  assert.throws(
    () => parseHistory("z.jsonl", '{"t":5,"k":"open","role":"cellapp","pid":4}\n{"t":2,"k":"beat"}\n'),
    /z\.jsonl:2: time 2 goes back/,
  );
});

Deno.test("the writer's log reads back: claims, a fenced drop and the close line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const log = new HistoryLog();
    const file = log.open(`${dir}/h`, "cellapp");
    log.real(1, 1, 1, 0);
    log.real(2, 1, 1, 0);
    log.unreal(1, "handing over");
    log.unreal(1, "offloaded"); // already not real here: nothing written
    log.base(3, "carol");
    log.acting(false);
    log.acting(false);
    log.acting(true);
    log.dropAll("fenced");
    log.close();
    assert.ok(file.endsWith(`/h/cellapp-${Deno.pid}.jsonl`));
    const [p] = await readHistory(`${dir}/h`);
    assert.deepEqual(
      p.records.filter((r) => r.k !== "beat").map((r) => "why" in r ? `${r.k}:${r.id}:${r.why}` : r.k),
      [
        "open",
        "real",
        "real",
        "unreal:1:handing over",
        "base",
        "hold",
        "unhold",
        "unreal:2:fenced",
        "unbase:3:fenced",
        "close",
      ],
    );
    assert.equal(checkHistory([p]).summary.accounts, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tools/history/main.ts: exit 1 with the report on a planted overlap, 0 on a clean run, 2 on bad input", async () => {
  const dir = await Deno.makeTempDir();
  const lines = (recs: HistoryRecord[]) => recs.map((r) => JSON.stringify(r)).join("\n") + "\n";
  const run = async (...args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("../../tools/history/main.ts", import.meta.url).pathname, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, text: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr) };
  };
  try {
    await Deno.writeTextFile(
      `${dir}/cellapp-1.jsonl`,
      lines([{ t: 0, k: "open", role: "cellapp", pid: 1 }, real(0, 1), close(300)]),
    );
    await Deno.writeTextFile(
      `${dir}/cellapp-2.jsonl`,
      lines([{ t: 0, k: "open", role: "cellapp", pid: 2 }, real(300, 1), close(600)]),
    );
    const clean = await run(dir);
    assert.equal(clean.code, 0, clean.text);
    assert.match(clean.text, /0 overlaps, 0 lost/);
    await Deno.writeTextFile(
      `${dir}/cellapp-3.jsonl`,
      lines([{ t: 0, k: "open", role: "cellapp", pid: 3 }, real(100, 1), close(200)]),
    );
    const bad = await run(dir);
    assert.equal(bad.code, 1, bad.text);
    assert.match(bad.text, /overlap: entity 1 real twice for 100\.0 ms/);
    assert.equal((await run(dir, "--tolerance=100")).code, 0);
    const wrong = await run(dir, "--kill=nope");
    assert.equal(wrong.code, 2);
    assert.match(wrong.text, /--kill: "nope" is not PID@MS/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
