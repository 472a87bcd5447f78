/**
 * An account lives in one place: its entity is checked out in the database to one base on one baseapp. Accounts
 * whose bases were restored from backup on another baseapp log in again anywhere and get that base (the login sent
 * on there), and two logins of one account on two baseapps at the same moment end with one base, one cell entity,
 * the later client holding it and the earlier one closed with a reason.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView, PlayersView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import {
  cellEntitiesOf,
  cellReady,
  type LocalCluster,
  startBaseProcess,
  startCluster,
  tempDir,
} from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const secret = "--secret=account checkout test";

/** A baseapp placing players where they were saved, on the shared KV file at `kv`. */
const baseapp = (procs: Procs, cluster: LocalCluster, kv: string) =>
  startBaseProcess(procs, cluster, [secret, "--max-speed=1000"], { SEAMLESS_KV: kv }, true);

const login = (url: string, name: string): Promise<Client> =>
  connect(url, { name, password: `${name} pw` }, { registry, resume: false });

/** The registration id of the baseapp serving `clientUrl`. */
async function baseappId(admin: string, clientUrl: string): Promise<number> {
  const view = (await api(admin, "/api/cluster")).body as ClusterView;
  const p = view.processes.find((p) => p.role === "baseapp" && p.clientUrl === clientUrl);
  if (!p) throw new Error(`no baseapp serves ${clientUrl}`);
  return p.id;
}

/** The players as the admin API lists them, every baseapp answering. */
async function players(admin: string): Promise<PlayersView> {
  const view = (await api(admin, "/api/players")).body as PlayersView;
  assert.deepEqual(view.unanswered, [], "every baseapp listed its players");
  return view;
}

Deno.test(
  "accounts restored from backup on another baseapp log in again anywhere: every one gets its base and its cell, " +
    "one base and one cell entity each, cluster-wide",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = `${dir.path}/base.kv`;
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const a = await baseapp(procs, cluster, kv);
    const b = await baseapp(procs, cluster, kv);
    const aId = await baseappId(cluster.admin, a.clientUrl);

    const names = ["ann", "bob", "cat", "dan"];
    const ids = new Map<string, number>();
    for (const name of names) {
      const c = await login(a.clientUrl, name);
      assert.equal(await cellReady(c), 1);
      ids.set(name, c.player.id);
      c.close();
    }
    await waitFor(
      "B holds the backups of the four players",
      () => b.proc.stderr.some((l) => l.includes("base backups held: 4")),
      10_000,
    );
    a.proc.kill("SIGKILL");
    await a.proc.status;
    for (const id of ids.values()) {
      await waitFor(
        `B restored ${id}`,
        () => b.proc.stderr.some((l) => l.includes(`Avatar ${id} restored from its backup (baseapp ${aId} died)`)),
        15_000,
      );
    }
    // A comes back on the same database, as the local cluster restarts it.
    const a2 = await baseapp(procs, cluster, kv);

    const again = await Promise.all(names.map((name, i) => login(i % 2 === 0 ? a2.clientUrl : b.clientUrl, name)));
    for (const [i, c] of again.entries()) {
      const name = names[i];
      assert.equal(c.player.id, ids.get(name), `${name} has its own entity`);
      assert.equal(await cellReady(c), 1, `${name} gets its cell`);
    }
    const view = await players(cluster.admin);
    assert.deepEqual(view.players.map((p) => p.account), names, "one base per account");
    for (const [name, id] of ids) {
      const cells = await cellEntitiesOf(cluster.admin, id);
      assert.equal(cells.length, 1, `exactly one cell entity for ${name}`);
      assert.equal(view.players.find((p) => p.account === name)!.entityId, id);
    }
    const logs = [...a2.proc.stderr, ...b.proc.stderr, ...cluster.cellapps[0].stderr];
    assert.ok(!logs.some((l) => l.includes("already exists")), "no second cell entity asked for");
    assert.ok(!logs.some((l) => l.includes("raced another save")), "no grouped saves racing each other");
    assert.ok(a2.proc.stderr.some((l) => / sent on: .* is held by baseapp /.test(l)), "A's logins were sent on to B");
    for (const c of again) c.close();
  },
);

Deno.test(
  "two logins of one account on two baseapps in the same millisecond: one base, one cell entity, the later client " +
    "holds it and the earlier one is closed with a reason",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = `${dir.path}/base.kv`;
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const a = await baseapp(procs, cluster, kv);
    const b = await baseapp(procs, cluster, kv);
    // The account and its entity exist, saved and logged out: what the logins race for is its checkout.
    const first = await login(a.clientUrl, "eve");
    assert.equal(await cellReady(first), 1);
    const id = first.player.id;
    await first.logout();
    await waitFor("eve logged out", async () => (await players(cluster.admin)).total === 0, 10_000);

    for (let round = 0; round < 3; round++) {
      const both = await Promise.all([login(a.clientUrl, "eve"), login(b.clientUrl, "eve")]);
      for (const c of both) assert.equal(c.player.id, id);
      // The earlier one may have been closed already while the later login was still under way.
      await waitFor("one of the two clients closed", () => both.some((c) => c.closed), 10_000);
      const open = both.filter((c) => !c.closed);
      assert.equal(open.length, 1, "one client holds the player");
      const { code, reason } = both.find((c) => c.closed)!.closedWith!;
      assert.equal(code, 4002);
      assert.match(reason, /logged in elsewhere/);
      assert.equal(await cellReady(open[0]), 1, "it has its cell");
      const view = await players(cluster.admin);
      assert.equal(view.total, 1, "one base");
      assert.equal(view.players[0].entityId, id);
      assert.equal((await cellEntitiesOf(cluster.admin, id)).length, 1, "one cell entity");
      await open[0].logout();
      await waitFor("eve logged out", async () => (await players(cluster.admin)).total === 0, 10_000);
    }
    // Logged out, the checkout is given back: four logins that took it (the first, then one per round), no holder.
    const db = await Deno.openKv(kv);
    try {
      await waitFor("eve's checkout given back", async () => {
        const r = (await db.get<{ holder: unknown; generation: number }>(["checkout", id])).value;
        return r !== null && r.holder === null && r.generation === 4;
      }, 5_000);
    } finally {
      db.close();
    }
    const logs = [...a.proc.stderr, ...b.proc.stderr];
    assert.ok(!logs.some((l) => l.includes("already exists")), "no second cell entity asked for");
    assert.ok(
      logs.some((l) => /login of "eve" sent on: .* is held by baseapp /.test(l)),
      "a login was sent on to the baseapp holding the base",
    );
  },
);

Deno.test(
  "a baseapp that comes back after kill -9 gives back its checkouts from before its death once the cellappmgr " +
    "lists it, and its players log in again: one base, one cell entity each, checked out anew",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = `${dir.path}/base.kv`;
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const a = await baseapp(procs, cluster, kv);
    const aId = await baseappId(cluster.admin, a.clientUrl);
    const ids = new Map<string, number>();
    for (const name of ["fay", "gus"]) {
      const c = await login(a.clientUrl, name);
      assert.equal(await cellReady(c), 1);
      ids.set(name, c.player.id);
      c.close();
    }
    a.proc.kill("SIGKILL");
    await a.proc.status;
    await waitFor("the cellappmgr no longer lists A", async () => {
      const view = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
      return !view.processes.some((p) => p.id === aId && p.role === "baseapp");
    }, 10_000);

    const a2 = await baseapp(procs, cluster, kv);
    const a2Id = await baseappId(cluster.admin, a2.clientUrl);
    await waitFor(
      "A's old checkouts given back",
      () =>
        a2.proc.stderr.some((l) =>
          l.includes(`checkouts of baseapp ${aId} at `) && l.includes("not list as live: 2 given back, 0 left")
        ),
      10_000,
    );
    for (const [name, id] of ids) {
      const c = await login(a2.clientUrl, name);
      assert.equal(c.player.id, id);
      assert.equal(await cellReady(c), 1, `${name} gets its cell`);
      assert.equal((await cellEntitiesOf(cluster.admin, id)).length, 1, `one cell entity for ${name}`);
    }
    assert.deepEqual((await players(cluster.admin)).players.map((p) => p.account), ["fay", "gus"]);
    assert.ok(!a2.proc.stderr.some((l) => l.includes("checked out here instead")), "nothing left stale to take over");
    // The database says whose they are now: A's new registration, a generation above the one before its death.
    const db = await Deno.openKv(kv);
    try {
      for (const id of ids.values()) {
        const r = (await db.get<{ holder: { baseapp: number }; generation: number }>(["checkout", id])).value!;
        assert.equal(r.holder.baseapp, a2Id);
        assert.equal(r.generation, 2);
        assert.equal((await db.get(["checkedOut", aId, id])).value, null, "the old index entry is gone");
      }
    } finally {
      db.close();
    }
  },
);

Deno.test(
  "logins right after a baseapp is killed, while the others restore its bases: each is sent to the baseapp " +
    "restoring its base and takes it over there, one base and one cell entity each",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = `${dir.path}/base.kv`;
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const a = await baseapp(procs, cluster, kv);
    const b = await baseapp(procs, cluster, kv);
    const c = await baseapp(procs, cluster, kv);
    const names = ["hal", "ivy", "jon", "kim"];
    const ids = new Map<string, number>();
    for (const name of names) {
      const cl = await login(a.clientUrl, name);
      assert.equal(await cellReady(cl), 1);
      ids.set(name, cl.player.id);
      cl.close();
    }
    const held = (lines: string[]) =>
      Number(lines.findLast((l) => l.includes("base backups held: "))?.match(/held: (\d+)/)?.[1] ?? 0);
    await waitFor("B and C hold the four backups", () => held(b.proc.stderr) + held(c.proc.stderr) >= 4, 10_000);
    a.proc.kill("SIGKILL");
    await a.proc.status;
    // At once: the death may not be announced yet, nor the restores done.
    const again = await Promise.all(names.map((name, i) => login(i % 2 === 0 ? b.clientUrl : c.clientUrl, name)));
    for (const [i, cl] of again.entries()) {
      assert.equal(cl.player.id, ids.get(names[i]));
      assert.equal(await cellReady(cl), 1, `${names[i]} gets its cell`);
    }
    const view = await players(cluster.admin);
    assert.deepEqual(view.players.map((p) => p.account), names, "one base per account");
    for (const [name, id] of ids) {
      assert.equal((await cellEntitiesOf(cluster.admin, id)).length, 1, `exactly one cell entity for ${name}`);
    }
    const logs = [...b.proc.stderr, ...c.proc.stderr, ...cluster.cellapps[0].stderr];
    assert.ok(!logs.some((l) => l.includes("already exists")), "no second cell entity asked for");
    assert.ok(!logs.some((l) => l.includes("not restored from its backup")), "no restore gave way");
    for (const cl of again) cl.close();
  },
);
