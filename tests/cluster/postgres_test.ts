/**
 * Baseapp processes on one PostgreSQL server (--db): an account made through one baseapp is known to another; a
 * baseapp started before the database waits for it; a database away for 10 s costs no save, logins meanwhile
 * are refused with the reason, and everything goes on once it is back.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { EntityStore } from "../../base/persist/storage.ts";
import { openDb } from "../../core/db/mod.ts";
import { Procs } from "../../testing/procs.ts";
import { cellReady, type LocalCluster, startBaseProcess, startCluster, waitForPosition } from "../helpers/players.ts";
import { PgServer, skipWithoutPostgres } from "../../testing/postgres.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false, ignore: skipWithoutPostgres() };

const player = (url: string, name: string, password = "pw"): Promise<Client> =>
  connect(url, { name, password }, { registry });

/** A baseapp on the PostgreSQL at `db` that places players where they were saved. */
const baseapp = (procs: Procs, cluster: LocalCluster, db: string, flags: string[] = []) =>
  startBaseProcess(procs, cluster, [`--db=${db}`, "--max-speed=1000", ...flags], {}, true);

Deno.test("an account made through one baseapp is known to another on the same PostgreSQL", opts, async () => {
  await using pg = await PgServer.start();
  await using procs = new Procs();
  // The cellappmgr keeps its id mark there too.
  const cluster = await startCluster(procs, { mgrFlags: [`--db=${pg.url}`] });
  const [a, b] = await Promise.all([baseapp(procs, cluster, pg.url), baseapp(procs, cluster, pg.url)]);
  const ann = await player(a.clientUrl, "ann");
  assert.equal(await cellReady(ann), 1);
  const id = ann.player.id;
  ann.move({ x: 21, y: 0, z: -4 });
  // Wait for the move to reach its cell, then stop the baseapp: it saves at logout.
  await waitForPosition(cluster.admin, id, 21, -4);
  await using db = await openDb({ kv: "", db: pg.url });
  a.proc.kill("SIGTERM");
  assert.equal((await within("baseapp A exited", a.proc.status, 15_000)).code, 0);
  ann.close();
  const stored = await new EntityStore(db).load(id);
  assert.ok(stored, `entity ${id} is in PostgreSQL`);

  await assert.rejects(() => player(b.clientUrl, "ann", "wrong"), /wrong password/);
  const again = await player(b.clientUrl, "ann");
  assert.equal(again.player.id, id, "the same account's entity, through the other baseapp");
  assert.equal(await cellReady(again), 1);
  assert.deepEqual(stored.position, [21, 0, -4], "saved at logout where it moved");
  await waitFor(
    "the player where it was saved",
    () => again.player.position.x === 21 && again.player.position.z === -4,
  );
  assert.ok(b.proc.stderr.some((l) => l.includes(`ann logged in as Avatar ${id}`) && !l.includes("new account")));
  again.close();
});

Deno.test("a baseapp started before its PostgreSQL waits for it, one line per attempt", opts, async () => {
  await using pg = await PgServer.start();
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  await pg.stop();
  const url = pg.url.replace("postgres@", "postgres:hunter2@");
  const starting = baseapp(procs, cluster, url);
  // Started (and listed) before it prints its ready line.
  const proc = procs.all.at(-1)!;
  await waitFor(
    "two attempts logged",
    () => proc.stderr.filter((l) => /cannot be used \(attempt/.test(l)).length >= 2,
    15_000,
  );
  const line = proc.stderr.find((l) => /cannot be used \(attempt 1/.test(l))!;
  assert.match(
    line,
    /PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres cannot be used \(attempt 1: .*ECONNREFUSED/,
  );
  assert.ok(proc.stderr.every((l) => !l.includes("hunter2")), "the password is never logged");
  await pg.resume();
  const base = await within("the baseapp ready once the database answers", starting, 30_000);
  const ann = await player(base.clientUrl, "ann");
  assert.equal(await cellReady(ann), 1);
  ann.close();
});

Deno.test(
  "PostgreSQL away for 10 s: the autosave waits and lands, a login is refused with the reason, nothing crashes",
  opts,
  async () => {
    await using pg = await PgServer.start();
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const base = await baseapp(procs, cluster, pg.url, ["--autosave=1"]);
    const ann = await player(base.clientUrl, "ann");
    assert.equal(await cellReady(ann), 1);
    const id = ann.player.id;
    await using db = await openDb({ kv: "", db: pg.url });
    const store = new EntityStore(db);
    ann.move({ x: 12, y: 0, z: -7 });
    await waitFor("the move autosaved", async () => (await store.load(id))?.position[0] === 12, 10_000);

    await pg.stop();
    const outage = performance.now();
    ann.move({ x: 30, y: 0, z: -7 });
    await waitFor(
      "the baseapp saying its saves wait",
      () => base.proc.stderr.some((l) => /saves wait for the database: PostgreSQL at .* is unreachable/.test(l)),
      10_000,
    );
    await assert.rejects(() => player(base.clientUrl, "bob"), /login refused: the account database is unreachable/);
    // The outage lasts 10 s: ten autosave periods wait behind it.
    await new Promise((r) => setTimeout(r, Math.max(0, 10_000 - (performance.now() - outage))));
    assert.equal(ann.closed, false, "the player plays on while the database is away");
    await pg.resume();

    await waitFor(
      "the move made during the outage saved",
      async () => (await store.load(id))?.position[0] === 30,
      15_000,
    );
    const carl = await player(base.clientUrl, "carl");
    assert.equal(await cellReady(carl), 1, "logins work again");
    assert.equal(ann.closed, false, "the player kept playing through the outage");
    carl.close();
    ann.close();
    const status = await Promise.race([base.proc.status, new Promise((r) => setTimeout(() => r(null), 100))]);
    assert.equal(status, null, "the baseapp is still running");
    assert.ok(
      !base.proc.stderr.some((l) => / ERROR /.test(l)),
      base.proc.stderr.filter((l) => / ERROR /.test(l)).join("\n"),
    );
  },
);

Deno.test("the local cluster with --db puts its cellappmgr and its baseapp on PostgreSQL", opts, async () => {
  await using pg = await PgServer.start();
  await using procs = new Procs();
  const parent = await procs.start(["--port=0", "--admin-port=0", "--npcs=5", `--db=${pg.url}`], {
    readyTimeoutMs: 60_000,
  });
  for (const c of parent.ready.children as { pid: number }[]) procs.adopt(c.pid);
  await using db = await openDb({ kv: "", db: pg.url });
  // The cellappmgr stored its id mark there when it handed out the NPCs' ids; the baseapp its resume-token key.
  const mark = await waitFor(
    "the cellappmgr's id mark",
    async () => (await db.get(["cellappmgr", "entityIdHighWater"])).value,
  );
  assert.equal(typeof mark, "bigint");
  assert.ok((mark as bigint) >= 5n);
  const ann = await player(
    await waitFor("the baseapp's client URL", async () => {
      const r = await fetch(`${parent.ready.admin}/api/cluster`);
      const v = await r.json() as { processes: { role: string; clientUrl?: string }[] };
      return v.processes.find((p) => p.role === "baseapp")?.clientUrl;
    }, 30_000),
    "ann",
  );
  assert.ok((await db.get(["account", "ann"])).value, "the account is in PostgreSQL");
  ann.close();
  parent.kill("SIGTERM");
  assert.equal((await within("the local cluster stopped", parent.status, 15_000)).code, 0);
});
