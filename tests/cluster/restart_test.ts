/**
 * A cellappmgr that dies and comes back (kill -9, restarted on its port): it learns the spaces back from the
 * cellapps instead of making them again, keeps entity ids unique with what every member holds (a baseapp's
 * database included), and logins made meanwhile complete once it is back.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { CellEntityView, ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { cellReady, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const spaces = async (admin: string): Promise<SpaceSummaryView[]> =>
  ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;

const cellapps = async (admin: string): Promise<number[]> =>
  ((await api(admin, "/api/cluster")).body as ClusterView).processes.filter((p) => p.role === "cellapp").map((p) =>
    p.id
  );

/** What each cellapp holds of space `spaceId`, as it says itself (by cellapp id; absent when it holds none). */
async function holders(admin: string, spaceId: number): Promise<Map<number, CellEntityView[]>> {
  const out = new Map<number, CellEntityView[]>();
  for (const id of await cellapps(admin)) {
    const r = await api(admin, `/api/cellapps/${id}/cells/${spaceId}`);
    if (r.status === 200) out.set(id, (r.body as { entities: CellEntityView[] }).entities);
  }
  return out;
}

/** Starts a cellappmgr on `port` (the port of the one that died) and waits for its ready line. */
function restartMgr(procs: Procs, port: string, flags: string[] = []): Promise<Proc> {
  return procs.start(["--role=mgr", `--port=${port}`, "--admin-port=0", ...flags]);
}

const player = (url: string, name: string): Promise<Client> => connect(url, { name, password: "pw" }, { registry });

Deno.test(
  "after a cellappmgr restart the default space and its NPCs exist once, and a login made during the outage gets its cell",
  opts,
  async () => {
    await using procs = new Procs();
    const npcs = ["--npcs=40"];
    // Without a lease the world goes on through the outage (lease_test.ts shows it held still with one).
    const cluster = await startCluster(procs, { cellapps: 2, mgrFlags: npcs, cellFlags: ["--mgr-lease=0"] });
    const { clientUrl } = await startBaseProcess(procs, cluster, ["--mgr-lease=0"]);
    const early = await player(clientUrl, "early");
    assert.equal(await cellReady(early), 1);
    await waitFor("41 entities in the default space", async () => (await spaces(cluster.admin))[0]?.entities === 41);
    const holder = [...(await holders(cluster.admin, 1)).keys()];
    assert.equal(holder.length, 1, "one cellapp runs the default space");

    await waitFor("NPCs in the early player's view", () => early.entities.size > 0);
    cluster.mgr.kill("SIGKILL");
    await cluster.mgr.status;
    // The world goes on without its cellappmgr: the cellapps tick and the baseapp relays what they send.
    const before = new Map([...early.entities].map(([id, e]) => [id, `${e.position.x},${e.position.z}`]));
    await waitFor(
      "an NPC seen moving while the cellappmgr is away",
      () =>
        [...early.entities].some(([id, e]) => before.has(id) && before.get(id) !== `${e.position.x},${e.position.z}`),
      10_000,
    );
    // The baseapp has no cellappmgr: the login is checked and answered, the cell entity waits.
    const late = await player(clientUrl, "late");
    assert.equal(late.player.spaceId, 0, "no cell entity while the cellappmgr is away");

    const mgr2 = await restartMgr(procs, cluster.mgrAddress.split(":").pop()!, npcs);
    const admin2 = mgr2.ready.admin!;
    assert.equal(await cellReady(late), 1, "the waiting login completes in the default space");
    await waitFor("the two cellapps back", async () => (await cellapps(admin2)).length === 2);
    await waitFor("42 entities reported in the default space", async () => {
      const s = await spaces(admin2);
      return s.length === 1 && s[0].id === 1 && s[0].entities === 42;
    }, 10_000);
    const held = await holders(admin2, 1);
    assert.deepEqual([...held.keys()], holder, "the default space stays where it was, once");
    const entities = [...held.values()].flat();
    assert.equal(entities.filter((e) => e.type === "NPC").length, 40, "its NPCs were not spawned again");
    assert.deepEqual(
      entities.filter((e) => e.type === "Avatar").map((e) => e.id).sort(),
      [early.player.id, late.player.id].sort(),
    );
    assert.equal(new Set(entities.map((e) => e.id)).size, entities.length, "no id twice");
    early.close();
    late.close();
  },
);

Deno.test(
  "a cellapp that comes back after the rejoin window with the default space, made meanwhile elsewhere, shuts its copy down",
  opts,
  async () => {
    await using procs = new Procs();
    const npcs = ["--npcs=30"];
    const cluster = await startCluster(procs, { mgrFlags: npcs });
    const [late] = cluster.cellapps;
    const other = await procs.start(["--role=cell", "--port=0", `--mgr=${cluster.mgrAddress}`]);
    await waitFor("both cellapps", async () => (await cellapps(cluster.admin)).length === 2);
    const [lateId] = (await holders(cluster.admin, 1)).keys();

    cluster.mgr.kill("SIGKILL");
    await cluster.mgr.status;
    // The default space's cellapp sleeps through the restart and its rejoin window.
    Deno.kill(late.pid, "SIGSTOP");
    let mgr2: Proc;
    try {
      mgr2 = await restartMgr(procs, cluster.mgrAddress.split(":").pop()!, npcs);
      await waitFor("a default space made on the other cellapp", async () => {
        const held = await holders(mgr2.ready.admin!, 1);
        return held.size === 1 && !held.has(lateId) && [...held.values()][0].length === 30;
      }, 10_000);
    } finally {
      Deno.kill(late.pid, "SIGCONT");
    }
    const admin2 = mgr2.ready.admin!;
    await waitFor("the late cellapp back", async () => (await cellapps(admin2)).includes(lateId));
    await waitFor(
      "the late cellapp told why its claim was refused",
      () => mgr2.stderr.some((l) => l.includes(`cellapp ${lateId} claims space 1 (default), which this cellappmgr`)),
    );
    await waitFor("its copy of the default space gone", async () => !(await holders(admin2, 1)).has(lateId));
    const held = await holders(admin2, 1);
    assert.equal(held.size, 1, "one default space");
    assert.equal([...held.values()][0].filter((e) => e.type === "NPC").length, 30, "with one set of NPCs");
    assert.deepEqual((await spaces(admin2)).map((s) => s.id), [1]);
    assert.ok(other.pid > 0);
  },
);

Deno.test(
  "entity ids stay unique when the cellappmgr (without a database) and a baseapp both restart: the baseapp reports the ids its database holds",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const env = { SEAMLESS_KV: `${dir.path}/base.kv` };
    const cluster = await startCluster(procs);
    const first = await startBaseProcess(procs, cluster, [], env);
    const before: number[] = [];
    for (const name of ["ann", "bob", "cyd"]) {
      const c = await player(first.clientUrl, name);
      before.push(c.player.id);
      await cellReady(c);
      await c.logout();
    }
    first.proc.kill("SIGTERM");
    assert.equal((await first.proc.status).code, 0);
    cluster.mgr.kill("SIGKILL");
    await cluster.mgr.status;

    const mgr2 = await restartMgr(procs, cluster.mgrAddress.split(":").pop()!);
    const again = { ...cluster, mgr: mgr2, admin: mgr2.ready.admin! };
    const second = await startBaseProcess(procs, again, [], env);
    const dan = await player(second.clientUrl, "dan");
    assert.ok(!before.includes(dan.player.id), `a new account's id ${dan.player.id} is not one of ${before}`);
    const made = await api(again.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 100, 100], entities: [{ type: "NPC", count: 20 }] }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const npcs = [...(await holders(again.admin, (made.body as { id: number }).id)).values()].flat().map((e) => e.id);
    assert.equal(npcs.length, 20);
    const ann = await player(second.clientUrl, "ann");
    assert.equal(ann.player.id, before[0]);
    await cellReady(ann);
    const all = [...before, dan.player.id, ...npcs];
    assert.equal(new Set(all).size, all.length, `no id handed out twice: ${all}`);
    dan.close();
    ann.close();
  },
);
