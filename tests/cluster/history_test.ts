/**
 * The history checker on real runs: cellapps and a baseapp write their claim logs (--history), players and NPCs
 * live on two cellapps, then a fault. A cellapp killed -9: no entity real twice, nothing lost. A cellapp stopped
 * past the dead timeout with its fence turned off (SEAMLESS_FAULT_NO_FENCE): the checker reports the two reals.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { CellEntityView, ClusterView, SpaceView } from "../../core/views.ts";
import {
  checkHistory,
  claimsOf,
  formatReport,
  type HistoryReport,
  type ProcessLog,
  readHistory,
} from "../../tools/history/mod.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, type LocalCluster, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";
import { DEFAULT_BACKUP_PERIOD_MS } from "../../cell/backup/mod.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const NPCS = 30;

const wall = () => performance.timeOrigin + performance.now();

async function processes(admin: string): Promise<ClusterView["processes"]> {
  return ((await api(admin, "/api/cluster")).body as ClusterView).processes;
}

/** Every real entity id of space `spaceId` with the cellapps holding it real. */
async function realHolders(admin: string, spaceId: number): Promise<Map<number, number[]>> {
  const held = new Map<number, number[]>();
  for (const a of (await processes(admin)).filter((p) => p.role === "cellapp")) {
    const r = await api(admin, `/api/cellapps/${a.id}/cells/${spaceId}`);
    if (r.status !== 200) continue;
    for (const e of (r.body as { entities: CellEntityView[] }).entities) {
      if (e.real) held.set(e.id, [...(held.get(e.id) ?? []), a.id]);
    }
  }
  return held;
}

/** A world of two cells on two cellapps with NPCs and players, every process writing its claims into `dir`. */
async function world(procs: Procs, dir: string, env: Record<string, string> = {}) {
  const history = `--history=${dir}`;
  // `env` execs the program: the pid stays the cellapp's.
  const wrap = Object.keys(env).length ? ["env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`)] : undefined;
  const cluster = await startCluster(procs, { cellapps: 2, cellFlags: [history], cellAt: () => ({ wrap }) });
  const { clientUrl } = await startBaseProcess(procs, cluster, [history, "--max-speed=1000"]);
  const made = await api(cluster.admin, "/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [0, 0, 200, 100], cells: 2, entities: [{ type: "NPC", count: NPCS }] }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const spaceId = (made.body as { id: number }).id;
  const border = ((await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView).tree as { at: number };
  const clients: Client[] = [];
  for (const [i, x] of [border.at - 40, border.at - 30, border.at + 30, border.at - 8].entries()) {
    const c = await connect(clientUrl, { name: `h${i}`, password: "pw", spaceId, position: { x, y: 0, z: 50 } }, {
      registry,
    });
    clients.push(c);
    await cellReady(c);
  }
  return { cluster, spaceId, border: border.at, clients, loggedIn: wall() };
}

/**
 * Waits until two backup periods have passed since `since` on the clock of every process writing into `dir`: every
 * real has been backed up since (to its base, or an NPC to the buddy cellapp), so a fault after this loses nothing
 * that had no backup yet.
 */
async function backedUp(dir: string, since: number): Promise<void> {
  await waitFor("two backup periods since the last login in every claim log", async () => {
    const logs = await readHistory(dir);
    return logs.length >= 3 &&
      logs.every((l) => l.records[l.records.length - 1].t > since + 2 * DEFAULT_BACKUP_PERIOD_MS);
  }, 10_000);
}

/** Walks `c` across the border (x from border-8 to border+20) and waits until it is real on the other cellapp. */
async function walkAcross(admin: string, c: Client, border: number): Promise<void> {
  const from = (await entityAt(admin, c.player.id))!.cellapp;
  // Its ghost must exist on the other side before it can move there.
  await waitFor(
    "the walker's ghost on the other cellapp",
    async () => (await entityAt(admin, c.player.id))!.ghosts.length > 0,
  );
  for (let x = border - 8; x <= border + 20; x += 2) {
    c.move({ x, y: 0, z: 50 });
    await new Promise((r) => setTimeout(r, 50));
  }
  await waitFor("the walker real on the other cellapp", async () => {
    const e = await entityAt(admin, c.player.id);
    return e !== null && e.cellapp !== from;
  }, 10_000);
}

/** The cellapp process holding `id` real, and its member id. */
async function holderOf(cluster: LocalCluster, id: number): Promise<{ proc: Proc; member: number }> {
  const member = (await entityAt(cluster.admin, id))!.cellapp;
  const pid = (await processes(cluster.admin)).find((p) => p.id === member)!.pid;
  return { proc: cluster.cellapps.find((p) => p.pid === pid)!, member };
}

/** Reads and checks the claim logs once every process still running has written a line after `after`. */
async function checked(
  dir: string,
  running: number[],
  after: number,
  opts: Parameters<typeof checkHistory>[1],
): Promise<HistoryReport> {
  await waitFor("every running process's claim log past the fault", async () => {
    const logs = await readHistory(dir);
    return running.every((pid) => logs.some((l) => l.pid === pid && l.records[l.records.length - 1].t > after));
  }, 5000);
  const report = checkHistory(await readHistory(dir), opts);
  console.log(formatReport(report));
  return report;
}

Deno.test(
  "a cellapp killed -9: no entity real twice and nothing lost, over the whole run's claim logs",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const { cluster, spaceId, border, clients, loggedIn } = await world(procs, dir.path);
    try {
      await walkAcross(cluster.admin, clients[3], border);
      await backedUp(dir.path, loggedIn);
      const ids = [...(await realHolders(cluster.admin, spaceId)).keys()];
      assert.equal(ids.length, NPCS + clients.length);
      const doomed = await holderOf(cluster, clients[0].player.id);
      const before = wall();
      doomed.proc.kill("SIGKILL");
      const killedAt = wall();
      const survivor = cluster.cellapps.find((p) => p !== doomed.proc)!;
      await waitFor("every entity real again, once, on the surviving cellapp", async () => {
        const held = await realHolders(cluster.admin, spaceId);
        return ids.every((id) => held.get(id)?.length === 1) &&
          [...held.values()].every((apps) => apps.every((a) => a !== doomed.member));
      }, 20_000);
      const after = wall();
      const base = (await processes(cluster.admin)).find((p) => p.role === "baseapp")!;
      const report = await checked(dir.path, [survivor.pid, base.pid], after, {
        kills: { [doomed.proc.pid]: killedAt },
        loss: { before, after },
      });
      assert.deepEqual(report.overlaps.map((o) => `${o.kind} ${o.key}`), [], formatReport(report));
      assert.deepEqual(report.lost.map((l) => `${l.kind} ${l.id}`), [], formatReport(report));
      // Not vacuous: the killed cellapp held reals up to the kill, each is real again after, and the walker moved.
      const logs = await readHistory(dir.path);
      const killed = logs.find((l) => l.pid === doomed.proc.pid)!;
      assert.ok(killed.records.filter((r) => r.k === "real").length > 2, "the killed cellapp claimed reals");
      assert.ok(killed.records.every((r) => r.k !== "close"), "it wrote no close line");
      const heldAtKill = claimsOf(logs, { kills: { [doomed.proc.pid]: killedAt } }).claims
        .filter((c) => c.pid === doomed.proc.pid && c.kind === "real" && c.from <= before && c.to > before);
      assert.ok(
        heldAtKill.length > 1,
        "the killed cellapp held reals when it was killed: the loss check has something",
      );
      assert.ok(report.summary.entities >= ids.length);
      assert.equal(report.summary.accounts, clients.length);
      assert.ok(
        logs.some((l) =>
          l.records.some((r) => r.k === "unreal" && r.id === clients[3].player.id && r.why === "handing over")
        ),
        "the walker's hand-over is in the logs",
      );
    } finally {
      for (const c of clients) c.close();
    }
  },
);

/**
 * Stops the cellapp holding the first player past the cellappmgr's dead timeout, waits until its entities are real
 * on the other cellapp, wakes it, and checks the claim logs from then on.
 */
async function stopPastDeadTimeout(
  env: Record<string, string>,
): Promise<{ report: HistoryReport; pids: number[]; logs: ProcessLog[] }> {
  await using procs = new Procs();
  await using dir = await tempDir();
  const { cluster, spaceId, clients, loggedIn } = await world(procs, dir.path, env);
  try {
    await backedUp(dir.path, loggedIn);
    const ids = [...(await realHolders(cluster.admin, spaceId)).keys()];
    const stopped = await holderOf(cluster, clients[0].player.id);
    const other = cluster.cellapps.find((p) => p !== stopped.proc)!;
    const before = wall();
    stopped.proc.kill("SIGSTOP");
    let missing: number[] = [];
    try {
      await waitFor("the stopped cellapp's entities real on the other one", async () => {
        const held = await realHolders(cluster.admin, spaceId);
        missing = ids.filter((id) => held.get(id)?.length !== 1 || held.get(id)![0] === stopped.member);
        return missing.length === 0;
      }, 20_000);
    } catch (e) {
      const report = checkHistory(await readHistory(dir.path), { loss: { before, after: wall() - 200 } });
      throw new Error(`entities ${missing.join(", ")} not restored; the checker says:\n${formatReport(report)}`, {
        cause: e,
      });
    } finally {
      stopped.proc.kill("SIGCONT");
    }
    const woke = wall();
    await waitFor("the woken cellapp told it was fenced", () => stopped.proc.stderr.some((l) => l.includes("fenced:")));
    const report = await checked(dir.path, [stopped.proc.pid, other.pid], woke + 1000, {});
    return { report, pids: [stopped.proc.pid, other.pid], logs: await readHistory(dir.path) };
  } finally {
    for (const c of clients) c.close();
  }
}

Deno.test(
  "with the cellapp fence turned off, a cellapp stopped past the dead timeout is caught acting as a second real",
  opts,
  async () => {
    const { report, pids } = await stopPastDeadTimeout({ SEAMLESS_FAULT_NO_FENCE: "1" });
    const reals = report.overlaps.filter((o) => o.kind === "real");
    assert.ok(reals.length > 0, formatReport(report));
    for (const o of reals) assert.deepEqual([o.a.pid, o.b.pid].sort(), [...pids].sort(), formatReport(report));
  },
);

Deno.test("with the fence on, the same stop leaves no entity real twice", opts, async () => {
  const { report, pids, logs } = await stopPastDeadTimeout({});
  assert.deepEqual(report.overlaps.map((o) => `${o.kind} ${o.key}`), [], formatReport(report));
  assert.ok(report.summary.stalls > 0, "the stop is seen as a stall");
  // Counting the held reals too, the only double time is the woken cellapp's hold, which the fence's drop ends.
  const raw = checkHistory(logs, { heldActs: true });
  const stopped = logs.find((l) => l.pid === pids[0])!;
  const heldAt = stopped.records.find((r) => r.k === "hold")?.t;
  assert.ok(heldAt !== undefined, "the woken cellapp held its reals back");
  for (const o of raw.overlaps) {
    const stale = o.a.pid === pids[0] ? o.a : o.b;
    assert.equal(stale.why, "fenced", formatReport(raw));
    assert.ok(o.at >= heldAt, formatReport(raw));
  }
  const longest = Math.max(0, ...raw.overlaps.map((o) => o.ms));
  console.log(`held back from the wake until the fence's drop: ${longest.toFixed(1)} ms`);
});
