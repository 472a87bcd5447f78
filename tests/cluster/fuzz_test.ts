/**
 * Seeded, reproducible fuzzing of every kind of port of a real cluster:
 * random and mutated frames to the cellappmgr's, a cellapp's and a baseapp's
 * process ports (before the handshake and, with the cluster secret, after it
 * under every role), and random and mutated client messages to the baseapp's
 * client endpoint. Nothing may crash, memory stays bounded, and afterwards
 * the cluster serves as before. FUZZ_SEED and FUZZ_COUNT replay or scale it.
 */
import assert from "node:assert/strict";
import { runFuzz } from "../../tools/fuzz/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { api, isAlive, Procs } from "../../testing/procs.ts";
import { cellReady, seen } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";
import type { RssJump } from "../../tools/fuzz/run.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 20261123);
const COUNT = Number(Deno.env.get("FUZZ_COUNT") ?? 100_000);
/** Each part of each fuzzer must finish within this (it stops early, and the test fails, when it does not). */
const DEADLINE_MS = 80_000;
/** The inputs go in this many parts, each process's memory read (settled) after each. */
const PARTS = 3;
/**
 * Memory is bounded when it stops growing: V8 and the allocator size their
 * heaps up over the first tens of thousands of inputs and keep them, so what
 * counts is how far the last third of the inputs takes it past its highest
 * earlier reading, and a ceiling far below what one hostile frame used to cost
 * (2.6 GiB).
 */
const MAX_LATE_GROWTH = 32 * 1024 * 1024;
const MAX_RSS = Number(Deno.env.get("FUZZ_MAX_RSS") ?? 384 * 1024 * 1024);

/**
 * A bot's round trip: one client moves, another sees the move; resolves with the best of a few, in ms. The server
 * places both (at the spawn point, then where they were saved), near each other.
 */
async function roundTrip(url: string, procs: Procs, admin?: string): Promise<number> {
  const a = await connect(url, { name: "rt-a", password: "pw" }, { registry });
  const b = await connect(url, { name: "rt-b", password: "pw" }, { registry });
  try {
    await cellReady(a);
    await cellReady(b);
    const x0 = a.player.position.x;
    b.enableEntities();
    await seen(b, a.player.id);
    let best = Infinity;
    for (let i = 1; i <= 5; i++) {
      const x = x0 + i * 0.5;
      const t0 = performance.now();
      a.move({ x, y: 0, z: 0 }, [0, 0, 0]);
      await waitFor(
        "the move seen",
        () => Math.abs((b.entities.get(a.player.id)?.position.x ?? -1e9) - x) < 0.05,
        15_000,
      ).catch(async (e) => {
        const view = admin ? (await api(admin, `/api/entities/${a.player.id}`)).body : undefined;
        // Which entities b sees at a's new place (an update applied to the wrong entity would show here).
        const there = [...b.entities.values()].filter((o) => Math.hypot(o.position.x - x, o.position.z) < 1)
          .map((o) => `${o.id}@${o.position.x.toFixed(3)},${o.position.z.toFixed(3)}`);
        const settings = admin ? (await api(admin, "/api/spaces/1")).body as { settings?: unknown } : undefined;
        console.error(
          `b sees near x=${x}: ${there.join(" ")}; b sees ${b.entities.size} entities; space 1: ` +
            JSON.stringify(settings?.settings),
        );
        const logs = procs.all.map((p) => `--- ${p.ready.role} ${p.pid}\n${p.stderr.slice(-30).join("\n")}`);
        throw new Error(
          `${(e as Error).message}: a (${a.player.id}) at x=${a.player.position.x}, wanted ${x}; b sees ` +
            `${JSON.stringify(b.entities.get(a.player.id)?.position)}; server: ${JSON.stringify(view)}\n${
              logs.join("\n")
            }`,
          { cause: e },
        );
      });
      best = Math.min(best, performance.now() - t0);
      await new Promise((r) => setTimeout(r, 120));
    }
    return best;
  } finally {
    a.close();
    b.close();
  }
}

Deno.test(
  `fuzz: ${COUNT} inputs to each kind of port (seed ${SEED}): no crash, memory bounded, still serving`,
  opts,
  async () => {
    await using procs = new Procs();
    const env = { SEAMLESS_SECRET: "fuzz-secret", SEAMLESS_LOG_LEVEL: "warn" };
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=100"], { env });
    const admin = mgr.ready.admin!;
    const cell = await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`], { env });
    // The fuzzing players may misbehave without end: their abuse is answered, not cut off, so they keep going.
    const base = await procs.start(
      ["--role=base", "--port=0", "--client-port=0", `--mgr=${mgr.ready.address}`, "--abuse-limit=1000000000"],
      { env },
    );
    await waitFor(
      "the cluster with its default space",
      async () =>
        ((await api(admin, "/api/cluster")).body as ClusterView).processes?.length === 3 &&
        (await api(admin, "/api/spaces/1")).status === 200,
      30_000,
    );
    const clientUrl = base.ready.clientUrl as string;
    const before = await roundTrip(clientUrl, procs, admin);
    const targets = [mgr, cell, base].map((p) => ({ name: p.ready.role, address: p.ready.address!, pid: p.pid }));

    const run = await runFuzz({
      targets,
      clientUrl,
      secret: env.SEAMLESS_SECRET,
      seed: SEED,
      count: COUNT,
      deadlineMs: DEADLINE_MS,
      parts: PARTS,
    });
    for (const t of run.totals) {
      console.log(
        `fuzz ${t.name}: ${t.inputs} inputs, ${Math.round(t.inputs / t.ms * 1000)}/s` +
          (t.connections ? `, ${t.connections} connections, ${t.dropped} dropped by the process` : "") +
          (t.reasons ? `; most frequent drops: ${JSON.stringify(t.reasons)}` : ""),
      );
      assert.ok(t.inputs >= COUNT, `${t.name}: only ${t.inputs} of ${COUNT} inputs within the deadline`);
    }
    // Heap against resident memory, per process: tells a JS heap that holds on from memory outside it.
    const metrics = (await api(admin, "/metrics")).body as string;
    console.log(
      metrics.split("\n").filter((l) =>
        /^seamless_(process_(heap_used|heap_total|external_memory|resident_memory)_bytes|cell_(entities|ghosts|witnesses))\b/
          .test(l)
      ).join("\n"),
    );
    for (const p of [mgr, cell, base]) {
      const name = p.ready.role;
      // CI shows a failure's last lines: the memory note and what the process was doing go last.
      const logs = () =>
        `; its last log lines:\n${p.stderr.slice(-20).join("\n")}\n` +
        `what it logged most from 3 s before its steepest rise to 1 s after (numbers masked):\n` +
        `${aroundJump(p.stderr, run.jump.get(name))}` +
        memoryNote(p.pid, Math.max(...run.partPeaks.get(name)!), run.jump.get(name), metrics, name);
      assert.ok(isAlive(p.pid), `${name} survived${logs()}`);
      // Against the highest earlier reading, settled or sampled during a part: a process that gave memory back and took
      // it again has not grown.
      const rss = run.rss.get(name)!, end = rss.at(-1)!;
      const late = end - Math.max(...rss.slice(0, -1), ...run.partPeaks.get(name)!.slice(0, -1));
      console.log(
        `${name}: RSS ${rss.map((b) => Math.round(b / 2 ** 20)).join(" → ")} MiB (highest in each part: ${
          run.partPeaks.get(name)!.map((b) => Math.round(b / 2 ** 20)).join(", ")
        } MiB)`,
      );
      assert.ok(
        late < MAX_LATE_GROWTH,
        `${name} grew by ${
          Math.round(late / 2 ** 20)
        } MiB over its earlier high in the last third of the inputs${logs()}`,
      );
      assert.ok(end < MAX_RSS, `${name} holds ${Math.round(end / 2 ** 20)} MiB${logs()}`);
      assert.ok(!p.stderr.some((l) => /uncaught|panicked/i.test(l)), `${name} logged no uncaught error`);
    }
    // Still one cluster of the same three processes, and players play as before.
    const after = (await api(admin, "/api/cluster")).body as ClusterView;
    assert.deepEqual(
      after.processes.filter((p) => p.role !== "cellappmgr").map((p) => p.pid).sort(),
      [cell.pid, base.pid].sort(),
    );
    const rtAfter = await roundTrip(clientUrl, procs, admin);
    console.log(`round trip: ${before.toFixed(0)} ms before, ${rtAfter.toFixed(0)} ms after`);
    assert.ok(rtAfter < Math.max(500, before * 4), `round trip after the fuzz: ${rtAfter} ms (before: ${before} ms)`);
  },
);

const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;

/**
 * Where a process's memory is, for a failure message: its highest and steepest readings during the run, its
 * resident memory now by kind of mapping (glibc's main heap, other anonymous memory, files), and its own gauges.
 */
function memoryNote(pid: number, peak: number, jump: RssJump | undefined, metrics: string, role: string): string {
  const by = new Map<string, number>();
  let kind = "";
  for (const line of Deno.readTextFileSync(`/proc/${pid}/smaps`).split("\n")) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (head) {
      kind = head[2] === "[heap]"
        ? "[heap]"
        : head[2] === ""
        ? "anonymous"
        : head[2].startsWith("[")
        ? head[2]
        : "files";
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) by.set(kind, (by.get(kind) ?? 0) + Number(rss[1]) * 1024);
  }
  const own = metrics.split("\n").filter((l) => l.includes(`role="${role}"`) && !l.includes("_bucket")).slice(0, 40)
    .join("; ");
  return `\npeak ${mib(peak)}` +
    (jump ? `, steepest rise ${mib(jump.from)} → ${mib(jump.to)} at ${new Date(jump.at).toISOString()}` : "") +
    `; resident now: ${
      [...by].filter(([, v]) => v >= 2 ** 20).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${mib(v)}`).join(", ")
    }` +
    `\nits gauges: ${own}`;
}

/** The most frequent log lines (numbers masked) from 3 s before a rise to 1 s after (lines start with their ISO time). */
function aroundJump(lines: string[], jump: RssJump | undefined): string {
  if (!jump) return "(no rise)";
  const counts = new Map<string, number>();
  for (const l of lines) {
    const t = Date.parse(l.slice(0, 24));
    if (!(t >= jump.at - 3000 && t <= jump.at + 1000)) continue;
    const key = l.slice(24).replace(/\d+/g, "N").slice(0, 200);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, n]) => `${n}× ${k}`).join("\n") || "(nothing)";
}
