/**
 * The chaos scene of `deno task bench chaos`, shorter: 2 cellapps and a baseapp, a 2-cell space with 200 NPCs and
 * 10 bots raising their counters every second; one cellapp is killed (SIGKILL, then started again) and one stopped
 * (SIGSTOP) past the dead timeout. No entity is lost or doubled, every bot is connected at the end, no bot sees its
 * counter fall by more than one backup period (1 s) of raises, and the raises lost are those sent while the
 * cellapp was dead or stalled and not yet replaced.
 */
import assert from "node:assert/strict";
import { CHAOS_DEFAULTS, runChaos } from "../../bench/lib/chaos_run.ts";
import { within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("chaos: a cellapp killed and one stopped lose no entity, double none, keep every bot", opts, async () => {
  const lines: string[] = [];
  const report = await within(
    "the chaos run",
    runChaos({
      ...CHAOS_DEFAULTS,
      cellapps: 2,
      baseapps: 1,
      cells: 2,
      npcs: 200,
      bots: 10,
      side: 200,
      seconds: 16,
      faults: ["kill-cellapp", "stop-cellapp"],
      stopSeconds: 4,
      pollMs: 200,
      seed: 1,
      log: (l) => lines.push(l),
    }),
    60_000,
  );
  const why = `${lines.join("\n")}\n${JSON.stringify(report, null, 1)}`;
  assert.equal(report.loginErrors.length, 0, why);
  assert.equal(report.faults.length, 2, why);
  for (const f of report.faults) {
    assert.ok(f.affected > 0, `the ${f.kind} hit a cellapp holding entities\n${why}`);
    assert.notEqual(f.detectionMs, null, `the ${f.kind} was noticed\n${why}`);
    assert.equal(f.lost, 0, `${f.kind}: no entity lost\n${why}`);
    // A raise a bot saw confirmed is never undone: its base replays into the restored entity what its backup lacks.
    assert.equal(f.bots.maxDrop, 0, `${f.kind}: a counter fell by ${f.bots.maxDrop}\n${why}`);
    // Raises sent to a cellapp until its entities are restored elsewhere are lost with it: at a kill that is little
    // more than the backup period; a stopped cellapp is only declared dead after the dead timeout.
    const window = f.kind === "kill-cellapp" ? 1000 : (f.detectionMs ?? 0) + (f.restoreMaxMs ?? 0) + 1000;
    const most = Math.ceil(window / 1000) + 1;
    assert.ok(f.bots.maxUnreflected <= most, `${f.kind}: a bot lost ${f.bots.maxUnreflected} raises\n${why}`);
  }
  assert.deepEqual(report.lost, [], why);
  assert.deepEqual(report.doubled, [], why);
  assert.equal(report.botsConnectedAtEnd, 10, why);
  // The stopped cellapp came back fenced: it dropped what it held instead of doubling it.
  assert.ok(report.logs.some((l) => l.includes("fenced")), why);
});
