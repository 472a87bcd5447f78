/**
 * A baseapp killed outright (kill -9) and started again on the same database: what its players did since login
 * was autosaved, and the cell entities it left behind are adopted by the restarted baseapp, not refused as
 * duplicates nor left to warn forever.
 */
import { DenoKvDb } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { EntityStore } from "../../base/persist/storage.ts";
import { api, Procs } from "../../testing/procs.ts";
import {
  cellEntitiesOf,
  cellReady,
  entityAt,
  type LocalCluster,
  startBaseProcess,
  startCluster,
  tempDir,
} from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const player = (url: string, name: string): Promise<Client> => connect(url, { name, password: "pw" }, { registry });

/** A baseapp that places players where they were saved, with `flags`, on the KV file at `kv`. */
const baseapp = (procs: Procs, cluster: LocalCluster, kv: string, flags: string[] = []) =>
  startBaseProcess(procs, cluster, ["--max-speed=1000", ...flags], { SEAMLESS_KV: kv }, true);

Deno.test(
  "a baseapp killed with -9 after one autosave period gives the player back what it did since login",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = { path: `${dir.path}/base.kv` };
    const cluster = await startCluster(procs);
    const first = await baseapp(procs, cluster, kv.path, ["--autosave=1"]);
    const ann = await player(first.clientUrl, "ann");
    assert.equal(await cellReady(ann), 1);
    const id = ann.player.id;
    ann.move({ x: 12, y: 0, z: -7 });

    // The test reads the same database the baseapp writes: the move is there within about one period.
    const db = await Deno.openKv(kv.path);
    try {
      const store = new EntityStore(new DenoKvDb(db));
      await waitFor("the move autosaved", async () => {
        const s = await store.load(id);
        return s !== null && s.position[0] === 12 && s.position[2] === -7 && s.spaceId === 1;
      }, 5_000);
    } finally {
      db.close();
    }
    first.proc.kill("SIGKILL");
    await first.proc.status;
    ann.close();

    const second = await baseapp(procs, cluster, kv.path);
    const again = await player(second.clientUrl, "ann");
    assert.equal(again.player.id, id);
    assert.equal(await cellReady(again), 1);
    assert.deepEqual(again.player.position, { x: 12, y: 0, z: -7 }, "where it was when the baseapp died");
    again.close();
  },
);

const warnings = (lines: string[]): number => lines.filter((l) => / (WARN|ERROR) /.test(l)).length;

Deno.test(
  "a baseapp restarted after kill -9 adopts its player's orphaned cell entity: one cell entity, no refusal, no warnings",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = { path: `${dir.path}/base.kv` };
    const cluster = await startCluster(procs, { mgrFlags: ["--npcs=5"] });
    const [cellapp] = cluster.cellapps;
    const first = await baseapp(procs, cluster, kv.path);
    const ann = await player(first.clientUrl, "ann");
    assert.equal(await cellReady(ann), 1);
    ann.enableEntities();
    await waitFor("the NPCs in ann's AoI", () => ann.entities.size >= 5, 10_000);
    const id = ann.player.id;

    first.proc.kill("SIGKILL");
    await first.proc.status;
    ann.close();
    await waitFor(
      "the cellapp noticed the orphan",
      () => cellapp.stderr.some((l) => l.includes(`Avatar ${id} lost its base at`)),
      10_000,
    );
    const warned = warnings(cellapp.stderr);

    const second = await baseapp(procs, cluster, kv.path);
    const again = await player(second.clientUrl, "ann");
    assert.equal(again.player.id, id);
    assert.equal(await cellReady(again), 1, "the restored player gets its cell");
    again.enableEntities();
    await waitFor("the NPCs in ann's AoI again", () => again.entities.size >= 5, 10_000);
    // Time passes as the witness sees it: a couple of seconds of its frames.
    const frames = again.stats.framesIn;
    await waitFor("20 more frames from the witness", () => again.stats.framesIn >= frames + 20, 10_000);

    const found = (await api(cluster.admin, `/api/entities/${id}`)).body as { base: number | null };
    assert.notEqual(found.base, null, "the cell entity names the restarted baseapp as its base");
    assert.equal((await cellEntitiesOf(cluster.admin, id, 1)).length, 1, "exactly one cell entity for the player");
    const all = [...cellapp.stderr, ...second.proc.stderr, ...cluster.mgr.stderr];
    assert.ok(!all.some((l) => l.includes("already exists")), "no login refused as a duplicate");
    assert.equal(
      warnings(cellapp.stderr),
      warned,
      `no more warnings once the orphan was noticed:\n${cellapp.stderr.slice(-10).join("\n")}`,
    );
    again.close();
  },
);

Deno.test(
  "an orphaned cell entity that no baseapp adopts is destroyed after the orphan timeout, with a log line",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellFlags: ["--orphan-timeout=1"] });
    const [cellapp] = cluster.cellapps;
    const first = await startBaseProcess(procs, cluster);
    const bob = await player(first.clientUrl, "bob");
    assert.equal(await cellReady(bob), 1);
    bob.enableEntities();
    const id = bob.player.id;
    first.proc.kill("SIGKILL");
    await first.proc.status;
    bob.close();
    await waitFor(
      "the orphan destroyed",
      () => cellapp.stderr.some((l) => l.includes(`Avatar ${id}: no baseapp adopted it in time; destroyed`)),
      10_000,
    );
    assert.equal((await api(cluster.admin, `/api/entities/${id}`)).status, 404);
    assert.equal(cellapp.stderr.filter((l) => l.includes(`Avatar ${id} lost its base`)).length, 1, "logged once");
  },
);

Deno.test(
  "an orphan that walked onto another cellapp since its base last saved it is adopted where it is, not made twice",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kv = { path: `${dir.path}/base.kv` };
    const cluster = await startCluster(procs, { cellapps: 2 });
    const made = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 400, 200], cells: 2 }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const space = (made.body as { id: number }).id;
    // Players choose where they start (--client-spawn); nothing is autosaved during the test.
    const flags = ["--max-speed=1000", "--client-spawn", "--autosave=3600"];
    const first = await startBaseProcess(procs, cluster, flags, { SEAMLESS_KV: kv.path });
    const ann = await connect(first.clientUrl, {
      name: "walker",
      password: "pw",
      spaceId: space,
      position: { x: 50, y: 0, z: 100 },
    }, { registry });
    assert.equal(await cellReady(ann), space);
    const id = ann.player.id;
    const reals = async () => (await cellEntitiesOf(cluster.admin, id)).filter((e) => e.real);
    const startedOn = (await reals())[0].cellapp;
    for (const x of [100, 150, 200, 250, 300, 350]) {
      ann.move({ x, y: 0, z: 100 });
      await waitFor(`ann at x=${x}`, async () => (await entityAt(cluster.admin, id))?.position[0] === x, 10_000);
    }
    const walkedTo = await waitFor("the real handed over to the other cellapp", async () => {
      const r = await reals();
      return r.length === 1 && r[0].cellapp !== startedOn ? r[0].cellapp : null;
    }, 10_000);

    first.proc.kill("SIGKILL");
    await first.proc.status;
    ann.close();
    const second = await startBaseProcess(procs, cluster, flags, { SEAMLESS_KV: kv.path });
    const again = await connect(second.clientUrl, { name: "walker", password: "pw" }, { registry });
    assert.equal(again.player.id, id);
    assert.equal(await cellReady(again), space, "adopted in the space where it is");
    await waitFor("the base's new address on the cell entity", async () => (await entityAt(cluster.admin, id))?.base);
    assert.deepEqual((await reals()).map((e) => [e.cellapp, e.spaceId]), [[walkedTo, space]], "one real, where it is");
    again.close();
  },
);
