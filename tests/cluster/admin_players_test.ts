/**
 * The operators' view of players with real processes: GET /api/players across two baseapps, a kick that the
 * player's SDK client hears, a stalled baseapp that cannot stall the listing, a baseapp shut down through the admin
 * API that saves its player first, and an entity's properties with their flags in GET /api/entities/:id.
 */
import { DenoKvDb } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { EntityStore } from "../../base/persist/storage.ts";
import { decodePersistentState, PropertyContainer } from "../../core/def/mod.ts";
import type { ClusterView, EntityInspectView, PlayersView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, type LocalCluster, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const JSON_POST = { method: "POST", headers: { "content-type": "application/json" } };

const player = (url: string, name: string): Promise<Client> => connect(url, { name, password: "pw" }, { registry });

/** The close code and reason `c` gets, once it is closed. */
function closeOf(c: Client): Promise<{ code: number; reason: string }> {
  return new Promise((r) => c.on("close", (code, reason) => r({ code, reason })));
}

/** The cluster id of the baseapp whose client URL is `url`. */
async function baseappId(cluster: LocalCluster, url: string): Promise<number> {
  const view = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
  const p = view.processes.find((p) => p.role === "baseapp" && p.clientUrl === url);
  assert.ok(p, `no baseapp with client URL ${url}`);
  return p.id;
}

async function players(admin: string): Promise<PlayersView> {
  const r = await api(admin, "/api/players");
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as PlayersView;
}

Deno.test(
  "GET /api/players lists the players of two baseapps; a kick closes one client with its reason, the other stays",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const [a, b] = [await startBaseProcess(procs, cluster), await startBaseProcess(procs, cluster)];
    const [aId, bId] = [await baseappId(cluster, a.clientUrl), await baseappId(cluster, b.clientUrl)];
    const ann = await player(a.clientUrl, "ann");
    const bob = await player(b.clientUrl, "bob");
    await Promise.all([cellReady(ann), cellReady(bob)]);

    const listed = await waitFor("both players listed in space 1", async () => {
      const v = await players(cluster.admin);
      return v.players.length === 2 && v.players.every((p) => p.spaceId === 1) ? v : null;
    });
    assert.deepEqual(listed.unanswered, []);
    assert.equal(listed.total, 2);
    assert.equal(listed.truncated, false);
    assert.deepEqual(
      listed.players.map((p) => [p.account, p.entityId, p.type, p.baseapp, p.connected, p.graceMsLeft]),
      [["ann", ann.player.id, "Avatar", aId, true, null], ["bob", bob.player.id, "Avatar", bId, true, null]],
    );
    assert.equal(listed.players[0].position.length, 3);

    // GET /api/entities/:id: where it is, and its cell properties with their flags.
    const found = (await api(cluster.admin, `/api/entities/${bob.player.id}`)).body as EntityInspectView;
    assert.equal(found.base, bId);
    assert.equal(found.spaceId, 1);
    const name = found.properties.find((p) => p.name === "playerName");
    assert.ok(name, `playerName among ${found.properties.map((p) => p.name).join(", ")}`);
    assert.equal(name.value, "bob");
    assert.equal(typeof name.flags, "string");
    assert.ok(name.flags.length > 0);

    // Refused: nobody of that name (404), a body that is not {"reason"} (400); nobody is kicked by them.
    const nobody = await api(cluster.admin, "/api/players/carol/kick", JSON_POST);
    assert.equal(nobody.status, 404, JSON.stringify(nobody.body));
    for (const body of ['{"reason": 5}', '{"why": "x"}', "[1"]) {
      const bad = await api(cluster.admin, "/api/players/ann/kick", { ...JSON_POST, body });
      assert.equal(bad.status, 400, `${body}: ${JSON.stringify(bad.body)}`);
    }

    const annClosed = closeOf(ann);
    let bobClosed = false;
    bob.on("close", () => (bobClosed = true));
    const kick = await api(cluster.admin, "/api/players/ann/kick", {
      ...JSON_POST,
      body: JSON.stringify({ reason: "spamming the chat" }),
    });
    assert.equal(kick.status, 200, JSON.stringify(kick.body));
    assert.deepEqual(kick.body, { account: "ann", baseapp: aId, kicked: true });
    const closed = await within("ann's client closed", annClosed, 10_000);
    assert.match(closed.reason, /kicked: spamming the chat/);

    const after = await waitFor("ann gone from the list", async () => {
      const v = await players(cluster.admin);
      return v.players.length === 1 ? v : null;
    });
    assert.deepEqual(after.players.map((p) => p.account), ["bob"]);
    assert.equal(bobClosed, false, "bob stays connected");
    assert.equal((await api(cluster.admin, "/api/players/ann/kick", JSON_POST)).status, 404, "kicked already");
    bob.close();
  },
);

Deno.test(
  "a stalled baseapp (SIGSTOP) does not stall GET /api/players beyond its timeout, and is named",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const [a, b] = [await startBaseProcess(procs, cluster), await startBaseProcess(procs, cluster)];
    const bId = await baseappId(cluster, b.clientUrl);
    const ann = await player(a.clientUrl, "ann");
    const bob = await player(b.clientUrl, "bob");
    await Promise.all([cellReady(ann), cellReady(bob)]);
    await waitFor("both listed", async () => (await players(cluster.admin)).players.length === 2);

    b.proc.kill("SIGSTOP");
    try {
      const t0 = performance.now();
      const v = await players(cluster.admin);
      const ms = performance.now() - t0;
      // The baseapp gets 1.5 s: the answer comes within that and a margin, not when (or if) the baseapp wakes up.
      assert.ok(ms < 3_000, `GET /api/players took ${Math.round(ms)} ms`);
      assert.deepEqual(v.players.map((p) => p.account), ["ann"]);
      assert.deepEqual(v.unanswered.map((u) => u.baseapp), [bId]);
      assert.match(v.unanswered[0].error, /listPlayers/);
    } finally {
      b.proc.kill("SIGCONT");
    }
    ann.close();
    bob.close();
  },
);

Deno.test(
  "a baseapp shut down through POST /api/processes/:id/shutdown saves its player; the SDK client sees the reason",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kvPath = `${dir.path}/base.kv`;
    const cluster = await startCluster(procs);
    const base = await startBaseProcess(procs, cluster, ["--max-speed=1000", "--autosave=3600"], {
      SEAMLESS_KV: kvPath,
    });
    const id = await baseappId(cluster, base.clientUrl);
    const cat = await player(base.clientUrl, "cat");
    await cellReady(cat);
    const entity = cat.player.id;
    cat.move({ x: 7, y: 0, z: -3 });
    await waitFor("the move on the cell", async () => (await entityAt(cluster.admin, entity))?.position[0] === 7);

    const closed = closeOf(cat);
    const r = await api(cluster.admin, `/api/processes/${id}/shutdown`, JSON_POST);
    assert.equal(r.status, 202, JSON.stringify(r.body));
    const got = await within("cat's client closed", closed, 15_000);
    assert.match(got.reason, /shutting down: asked through the admin API/);
    assert.equal((await within("the baseapp exited", base.proc.status, 15_000)).code, 0);

    // Saved at logout, not by the autosave (an hour away): where it moved, and its persistent cell properties.
    using kv = await Deno.openKv(kvPath);
    const stored = await new EntityStore(new DenoKvDb(kv)).load(entity);
    assert.ok(stored, `entity ${entity} is in KV`);
    assert.deepEqual(stored.position, [7, 0, -3]);
    assert.equal(stored.spaceId, 1);
    const cell = new PropertyContainer(registry.get("Avatar"), "cell");
    decodePersistentState(stored.cell, cell);
    assert.equal(cell.get("playerName"), "cat");
  },
);
