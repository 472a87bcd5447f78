/**
 * Network faults between real processes on test hosts (testing/hosts.ts): a cellappmgr, three cellapps and
 * two baseapps, each on a host of its own, with PostgreSQL on another; a space of four cells over the three cellapps
 * with NPCs, and players on both baseapps, connected from a client host. Each fault lasts 10 s and then heals. After
 * each: every NPC and every player is real exactly once, and every player plays again (a raise of its counter comes
 * back confirmed) within the stated time of the heal.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { CellEntityView, ClusterView, SpaceView } from "../../core/views.ts";
import type { Host } from "../../testing/hosts.ts";
import { HostsCluster } from "../../testing/hosts_cluster.ts";
import { postgresMissing } from "../../testing/postgres.ts";
import { waitFor } from "../../testing/wait.ts";
import { tempDir } from "../helpers/players.ts";
import { checkHistory, formatReport, readHistory } from "../../tools/history/mod.ts";

/** The clock every process's claim log uses (core/history.ts). */
const wall = () => performance.timeOrigin + performance.now();

const why = (await HostsCluster.unavailable()) ?? postgresMissing();
if (why) console.log(`tests/hosts/partition_test.ts skipped: ${why}`);
const opts = { ignore: why !== null, sanitizeOps: false, sanitizeResources: false };

const FAULT_MS = 10_000;
/** Which faults run, in order (PARTITION_FAULTS=c,d replays some). */
const ONLY = (Deno.env.get("PARTITION_FAULTS") ?? "a,b,c,d,e,f").split(",");
const NPCS = 40;
/** How soon after a heal every player must be playing again, and the world whole. */
const BACK_WITHIN_MS = 5_000;
/** Slack for this 2-core machine running the rest of the suite at the same time. */
const SLACK_MS = 10_000;

/** One player and what it saw confirmed of its own counter. */
interface Player {
  name: string;
  client: Client;
  /** Highest counter value its own client saw. */
  confirmed: number;
  /** Times its client saw the counter lower than a value it had seen confirmed. */
  undone: number;
  /** Counter changes its client saw. */
  changes: number;
}

/** The reals of `spaceId` as the cellapps the cellappmgr lists report them: id → how many real copies. */
async function reals(cluster: HostsCluster, spaceId: number): Promise<Map<number, number>> {
  const view = await cluster.api<ClusterView>("/api/cluster");
  const out = new Map<number, number>();
  for (const p of view.processes.filter((p) => p.role === "cellapp")) {
    const r = await cluster.api<{ entities: CellEntityView[] }>(`/api/cellapps/${p.id}/cells/${spaceId}`)
      .catch(() => ({ entities: [] }));
    for (const e of r.entities) if (e.real) out.set(e.id, (out.get(e.id) ?? 0) + 1);
  }
  return out;
}

/** What is wrong with the world: ids missing or real twice, or "" when every id of `ids` is real exactly once. */
async function wrongs(cluster: HostsCluster, spaceId: number, ids: number[]): Promise<string> {
  const r = await reals(cluster, spaceId).catch((e) => new Error(String(e)));
  if (r instanceof Error) return r.message;
  const lost = ids.filter((id) => !r.has(id));
  const twice = [...r].filter(([, n]) => n > 1).map(([id]) => id);
  return [lost.length ? `lost ${lost.join(",")}` : "", twice.length ? `twice ${twice.join(",")}` : ""]
    .filter(Boolean).join("; ");
}

/**
 * Raises `p`'s counter and resolves once its own client sees the counter change: the player plays. (Whether the value
 * went on from what it had seen confirmed is counted apart, in `undone`.)
 */
async function play(p: Player, ms: number): Promise<void> {
  const before = p.changes;
  p.client.callCell(null, "raiseCounter");
  await waitFor(`${p.name}'s raise seen (counter ${p.confirmed})`, () => p.changes > before, ms);
}

/** Waits until every player plays and the world is whole; resolves with the ms it took. */
async function whole(cluster: HostsCluster, spaceId: number, players: Player[], ids: number[]): Promise<number> {
  const t0 = performance.now();
  await waitFor(
    "every NPC and player real exactly once",
    async () => {
      const wrong = await wrongs(cluster, spaceId, ids);
      if (wrong) throw new Error(wrong);
      return true;
    },
    BACK_WITHIN_MS + SLACK_MS,
    250,
  );
  await Promise.all(players.map((p) => play(p, BACK_WITHIN_MS + SLACK_MS)));
  const ms = performance.now() - t0;
  // And every process is a member again (one declared dead comes back fenced, empty).
  await cluster.waitRegistered(BACK_WITHIN_MS + SLACK_MS);
  return ms;
}

Deno.test("partitions: cellapps, a baseapp, the cellappmgr and the database cut off for 10 s each", opts, async () => {
  await using history = await tempDir();
  await using cluster = await HostsCluster.start({
    cellapps: 3,
    baseapps: 2,
    postgres: true,
    clientsHere: true,
    env: { SEAMLESS_LOG_LEVEL: "info", SEAMLESS_HISTORY: history.path },
  });
  const { hosts } = cluster;
  const made = await cluster.api<{ id: number }>("/api/spaces", {
    method: "POST",
    body: JSON.stringify({
      bounds: [0, 0, 400, 400],
      cells: 4,
      balance: false,
      entities: [{ type: "NPC", count: NPCS }],
    }),
  });
  const spaceId = made.id;
  const space = await cluster.api<SpaceView>(`/api/spaces/${spaceId}`);
  assert.equal(new Set(space.cells.map((c) => c.cellapp)).size, 3, "the four cells are on all three cellapps");
  const urls = await cluster.clientUrls();
  const players: Player[] = [];
  const corners = [[60, 60], [340, 60], [60, 340], [340, 340]];
  try {
    for (const [i, [x, z]] of corners.entries()) {
      const name = `part-${i}`;
      const client = await connect(urls[i % 2], { name, password: "pw", spaceId, position: { x, y: 0, z } }, {
        registry,
        resume: { urls: [urls[i % 2], urls[(i + 1) % 2]] },
      });
      const p: Player = { name, client, confirmed: 0, undone: 0, changes: 0 };
      client.on("playerProperty", (prop, value) => {
        if (prop !== "counter") return;
        const v = value as number;
        p.changes++;
        if (v < p.confirmed) p.undone++;
        p.confirmed = Math.max(p.confirmed, v);
      });
      players.push(p);
      await waitFor(`${name} in its cell`, () => client.player.spaceId === spaceId, 20_000);
    }
    const npcs = [...(await reals(cluster, spaceId)).keys()];
    const ids = [...npcs];
    assert.equal(ids.length, NPCS + players.length, "every NPC and player real");
    await Promise.all(players.map((p) => play(p, 10_000)));

    const cellOf = async (p: Player) =>
      (await cluster.api<{ cellapp: number }>(`/api/entities/${p.client.player.id}`)).cellapp;
    const cellappHost = async (id: number) => {
      const view = await cluster.api<ClusterView>("/api/cluster");
      const pid = view.processes.find((p) => p.id === id)!.pid;
      return hosts.get(`cell${cluster.cellapps.findIndex((c) => c.pid === pid) + 1}`);
    };
    const results: string[] = [];
    const windows: { name: string; before: number; after: number }[] = [];
    const fault = async (name: string, fences: number, cut: () => Promise<void>, heal: () => Promise<void>) => {
      const logFrom = cluster.mgr.stderr.length;
      const before = wall();
      await cut();
      // The players go on playing through the fault where their side of it lets them; what they saw is kept.
      const busy = players.map(async (p) => {
        const until = performance.now() + FAULT_MS;
        while (performance.now() < until) await play(p, 1_000).catch(() => {});
      });
      await new Promise((r) => setTimeout(r, FAULT_MS));
      await heal();
      await Promise.all(busy);
      const ms = await whole(cluster, spaceId, players, ids);
      windows.push({ name, before, after: wall() });
      const fenced = cluster.mgr.stderr.slice(logFrom).filter((l) => / is fenced: /.test(l)).length;
      results.push(`${name}: whole and playing ${Math.round(ms)} ms after the heal; ${fenced} member(s) fenced`);
      console.log(results.at(-1));
      assert.equal(fenced, fences, `${name}: members fenced`);
    };

    const mgr = hosts.get("mgr"), base1 = hosts.get("base1"), db = hosts.get("db");
    const [c1, c2] = [hosts.get("cell1"), hosts.get("cell2")];
    /** Cuts `x` and `y` apart, both ways; returns what heals it. */
    const apart = (x: Host, y: Host) => ({
      cut: async () => {
        await hosts.block(x, y);
        await hosts.block(y, x);
      },
      heal: async () => {
        await hosts.unblock(x, y);
        await hosts.unblock(y, x);
      },
    });
    /** Each fault: its name, how many members it gets fenced (declared dead, then back), and how it is made. */
    const faults: Record<
      string,
      [string, number, () => Promise<{ cut: () => Promise<void>; heal: () => Promise<void> }>]
    > = {
      a: ["a cellapp cut off from everything", 1, async () => {
        const h = await cellappHost(await cellOf(players[0]));
        return { cut: () => hosts.cut(h), heal: () => hosts.heal(h) };
      }],
      b: [
        "a cellapp cut off from the cellappmgr only",
        1,
        async () => apart(await cellappHost(await cellOf(players[1])), mgr),
      ],
      c: ["a baseapp cut off from the cellappmgr only", 1, () => Promise.resolve(apart(base1, mgr))],
      d: [
        "the cellappmgr cut off from everything",
        0,
        () => Promise.resolve({ cut: () => hosts.cut(mgr), heal: () => hosts.heal(mgr) }),
      ],
      e: ["two cellapps apart, both reaching the cellappmgr", 0, () => Promise.resolve(apart(c1, c2))],
      f: ["the database cut off from a baseapp", 0, () => Promise.resolve(apart(base1, db))],
    };
    for (const key of ONLY) {
      const [name, fences, make] = faults[key];
      const { cut, heal } = await make();
      await fault(`(${key}) ${name}`, fences, cut, heal);
    }
    console.log(results.join("\n"));
    // Over the whole run no entity was real twice and no account had two bases; what existed before each fault
    // exists after it.
    await new Promise((r) => setTimeout(r, 300));
    const logs = await readHistory(history.path);
    const report = checkHistory(logs, {});
    assert.deepEqual(report.overlaps, [], formatReport(report));
    for (const w of windows) {
      const r = checkHistory(logs, { loss: { before: w.before, after: w.after } });
      assert.deepEqual(r.lost, [], `${w.name}:\n${formatReport(r)}`);
    }
    for (const p of players) assert.equal(p.undone, 0, `${p.name} saw a confirmed raise undone`);
  } catch (e) {
    for (const p of cluster.procs.all) {
      console.error(`${p.ready.role} ${p.ready.address}:\n  ${p.stderr.slice(-25).join("\n  ")}`);
    }
    throw e;
  } finally {
    for (const p of players) p.client.close();
  }
});
