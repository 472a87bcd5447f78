/**
 * A baseapp killed with -9 while another runs (docs/faults.md, "Backups"): its bases were backed up to the other, which
 * restores them; their cell entities take the new base, and the SDK clients resume there by themselves, no password.
 */
import assert from "node:assert/strict";
import { Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { CellEntityView, ClusterView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const secret = "--secret=base backup test";

/** The cell entities with id `id` in space 1 on every cellapp, as each cellapp lists them (the admin API). */
async function inSpace1(admin: string, id: number): Promise<CellEntityView[]> {
  const view = (await api(admin, "/api/cluster")).body as ClusterView;
  const out: CellEntityView[] = [];
  for (const p of view.processes.filter((p) => p.role === "cellapp")) {
    const r = await api(admin, `/api/cellapps/${p.id}/cells/1`);
    if (r.status === 200) out.push(...(r.body as { entities: CellEntityView[] }).entities.filter((e) => e.id === id));
  }
  return out;
}

/** The registration id of the baseapp serving `clientUrl`. */
async function baseappId(admin: string, clientUrl: string): Promise<number> {
  const view = (await api(admin, "/api/cluster")).body as ClusterView;
  const p = view.processes.find((p) => p.role === "baseapp" && p.clientUrl === clientUrl);
  if (!p) throw new Error(`no baseapp serves ${clientUrl}`);
  return p.id;
}

Deno.test(
  "players of a baseapp killed with -9 resume on the other baseapp by themselves: same entity, one cell entity, " +
    "its base moved, what they changed kept, cell traffic again",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: [secret, "--npcs=3"], cellFlags: [secret] });
    // Separate in-memory databases: what B gives back comes from the backups, not from A's saves.
    const a = await startBaseProcess(procs, cluster, [secret], {}, true);
    const b = await startBaseProcess(procs, cluster, [secret], {}, true);
    const [aId, bId] = [await baseappId(cluster.admin, a.clientUrl), await baseappId(cluster.admin, b.clientUrl)];

    const players: Client[] = [];
    for (const name of ["ann", "bob", "cat"]) {
      const c = await connect(a.clientUrl, { name, password: `${name} pw` }, {
        registry,
        resume: { withinMs: 20_000 },
      });
      assert.equal(await cellReady(c), 1);
      players.push(c);
    }
    const resumed = new Map<Client, string>();
    for (const c of players) {
      c.on("resumed", (url: string) => resumed.set(c, url));
      c.callCell(null, "raiseCounter");
      c.callCell(null, "raiseCounter");
    }
    for (const c of players) {
      await waitFor(`${c.player.id}'s counter raised`, () => c.player.props.counter === 2, 10_000);
      await waitFor("a resume token", () => c.resumeToken);
    }
    // Within the backup period (1 s) the change and the token reach B: its log says how many backups it holds.
    const ids = players.map((c) => c.player.id);
    await waitFor(
      "B holds the backups of the three players",
      () => b.proc.stderr.some((l) => l.includes("base backups held: 3")),
      10_000,
    );

    const oldToken = players[0].resumeToken!;
    a.proc.kill("SIGKILL");
    await a.proc.status;
    await waitFor("every player resumed", () => resumed.size === players.length, 20_000);

    for (const [i, c] of players.entries()) {
      const id = ids[i];
      assert.equal(resumed.get(c), b.clientUrl, "on the live baseapp");
      assert.equal(c.closed, false);
      assert.equal(c.player.id, id, "its own entity");
      assert.ok(
        b.proc.stderr.some((l) => l.includes(`Avatar ${id} restored from its backup (baseapp ${aId} died), its cell`)),
        "B restored it from its backup and told its cell entity",
      );
      // Its cell properties come with its new witness.
      await waitFor(`${id}'s counter as it left it before the kill`, () => c.player.props.counter === 2, 10_000);
      assert.equal((await inSpace1(cluster.admin, id)).length, 1, "exactly one cell entity");
      const found = (await api(cluster.admin, `/api/entities/${id}`)).body as { base: number | null };
      assert.equal(found.base, bId, `its cell entity names B (${bId}), not A (${aId}), as its base`);
      // Cell traffic reaches the client through its new base: a property change, and the AoI's NPCs.
      c.callCell(null, "raiseCounter");
      await waitFor(`${id}'s counter raised through B`, () => c.player.props.counter === 3, 10_000);
      await waitFor("the NPCs in its AoI again", () => c.entities.size >= 3, 10_000);
    }
    assert.ok(!b.proc.stderr.some((l) => l.includes("already exists")), "no second cell entity asked for");
    // The token ann resumed with works once, across baseapps too.
    await assert.rejects(Client.resume(b.clientUrl, oldToken, { registry }), /already used/);
    for (const c of players) c.close();
  },
);
