/** Cell backups at the base: a real cluster's cellapp backs a player's cell entity up to its baseapp (in this process). */
import assert from "node:assert/strict";
import { decodeCellBackup } from "../../core/def/mod.ts";
import { BackupMsg, type CellBackup, dial, Handlers, WireServer } from "../../core/wire/mod.ts";
import { login, startBase, testRegistry } from "./fixtures.ts";
import { cellReady, entityAt, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";
import { api, Procs } from "../../testing/procs.ts";
import type { ClusterView } from "../../core/views.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "the base gets its cell entity's backup every period, with what changed; others' backups are refused",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "backedup", position: { x: 4, y: 0, z: 2 } });
    await cellReady(c);
    const p = b.app.proxies.get(c.player.id)!;
    const keeper = p.cellBackup;

    // Arrivals, as seen by polling often: one per period (1 s), not more, not in bursts. The first may be the one a
    // new real gets at once (cell/backup/backup_sender.ts), less than a period before the next.
    const arrivals: number[] = [];
    let seenKept = 0;
    await waitFor(
      "four backups",
      () => {
        if (keeper.stats.kept !== seenKept) {
          assert.equal(keeper.stats.kept, seenKept + 1, "one backup at a time");
          seenKept = keeper.stats.kept;
          arrivals.push(performance.now());
        }
        return arrivals.length >= 4;
      },
      10_000,
      10,
    );
    for (let i = 2; i < arrivals.length; i++) {
      const gap = arrivals[i] - arrivals[i - 1];
      assert.ok(gap > 600 && gap < 1500, `backups ${Math.round(gap)} ms apart, for a 1 s period`);
    }
    const first = keeper.latest!;
    assert.equal(first.entity.id, c.player.id);
    assert.deepEqual(first.entity.position, [4, 0, 2]);

    // A property changed on the cell is in the next backup.
    c.callCell(null, "raiseCounter");
    c.move({ x: 5, y: 0, z: 2 }, [0, 0, 0]);
    const avatar = testRegistry.find("Avatar")!;
    await waitFor("a backup with counter 1 at x = 5", () => {
      const latest = keeper.latest!;
      return decodeCellBackup(avatar, latest.entity.props, latest.entity.id).view.counter === 1 &&
        latest.entity.position[0] === 5;
    }, 5000);

    // A cellapp that does not hold the real sends one: refused, and the kept one stays the real's.
    const fake = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers: new Handlers() });
    const ch = await dial(b.app.address, {
      role: "cellapp",
      address: fake.address,
      handlers: new Handlers(),
      heartbeatPayload: () => ({ load: 0 }),
    });
    try {
      const forged: CellBackup = { ...keeper.latest!, entity: { ...keeper.latest!.entity, position: [90, 0, 90] } };
      ch.send(BackupMsg.cellBackup, c.player.id, forged);
      await waitFor("the forged backup refused", () => keeper.stats.refused === 1, 5000);
      const kept = keeper.stats.kept;
      await waitFor("the real's next backup", () => keeper.stats.kept > kept, 5000);
      assert.deepEqual(keeper.latest!.entity.position, [5, 0, 2]);
    } finally {
      ch.close("test over");
      fake.close();
    }
    c.close();
  },
);

Deno.test(
  "a logout while the cell entity is being restored waits for it and destroys it: nothing is left",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "leaving", position: { x: 1, y: 0, z: 1 } });
    await cellReady(c);
    const p = b.app.proxies.get(c.player.id)!;
    await waitFor("a first backup", () => p.cellBackup.latest !== null, 5000);
    // As if its cellapp had died: the restore goes to the cellappmgr (which finds the real where it is), and the
    // player logs out before the answer.
    const restoring = p.onCellAppDied(await cellappOf(b, p.id));
    assert.equal(p.cellState, "creating");
    const out = p.logout();
    await restoring;
    await out;
    await waitFor("its cell entity gone", async () => (await entityAt(b.admin, c.player.id)) === null, 5000);
  },
);

Deno.test(
  "kept bytes that are not the entity's backup lose its cell entity when its cellapp dies, with a word to its client",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "garbled", position: { x: 2, y: 0, z: 2 } });
    await cellReady(c);
    const p = b.app.proxies.get(c.player.id)!;
    await waitFor("a first backup", () => p.cellBackup.has, 5000);
    // As if its cellapp had sent bytes that are no backup: they are read only now, to restore.
    p.cellBackup.keepRecord({ id: p.id, spaceId: p.spaceId, epoch: 0, clientCallSeq: 0, bytes: Uint8Array.of(0xc1) });
    const told = new Promise<string>((resolve) => c.on("cellGone", resolve));
    await p.onCellAppDied(await cellappOf(b, p.id));
    assert.equal(p.cellState, "none");
    assert.equal(p.cellBackup.has, false);
    assert.match(await told, /not restored: backup of entity \d+ (refused|is not valid msgpack)/);
  },
);

Deno.test(
  "a cell entity whose cellapp dies before its first backup is made anew, the calls its client sent replayed once",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2 });
    await using b = await startBase({}, { cluster });
    const c = await login(b.app, { name: "early", position: { x: 3, y: 0, z: 3 } });
    await cellReady(c);
    const p = b.app.proxies.get(c.player.id)!;
    const at = (await entityAt(b.admin, p.id))!;
    const { processes } = (await api(b.admin, "/api/cluster")).body as ClusterView;
    const pid = processes.find((x) => x.role === "cellapp" && x.id === at.cellapp)!.pid;
    const doomed = cluster.cellapps.find((x) => x.pid === pid)!;

    // Its cellapp hangs; as if no backup had reached the base before, the base holds none.
    doomed.kill("SIGSTOP");
    p.cellBackup.clear();
    const gone: string[] = [];
    c.on("cellGone", (why) => gone.push(why));
    let echoed = false;
    c.on("playerMethod", (name, args) => {
      if (name === "onChat" && args[1] === "echo: sent") echoed = true;
    });
    c.callCell(null, "raiseCounter");
    c.callCell(null, "raiseCounter");
    c.callBase("say", "sent");
    // The echo comes by way of the baseapp alone: it has read the two calls before it, and keeps them.
    await waitFor("the echo of the base call sent after the raises", () => echoed, 5000);
    doomed.kill("SIGKILL");

    await b.log.waitFor(/cell entity made anew in space \d+ on .*: its cellapp died before its first backup/, 15_000);
    await waitFor("counter 2 in the entity made anew", () => c.player.props.counter === 2, 10_000);
    c.callCell(null, "raiseCounter");
    await waitFor("counter 3 after one more raise", () => c.player.props.counter === 3, 10_000);
    assert.deepEqual(gone, [], "the client was not told its cell entity is gone");
    const held = (await entityAt(b.admin, p.id))!;
    assert.notEqual(held.cellapp, at.cellapp, "the entity is on the other cellapp");
    assert.equal(p.cellState, "live");
  },
);

/** The address of the cellapp holding the real of entity `id`. */
async function cellappOf(b: Awaited<ReturnType<typeof startBase>>, id: number): Promise<string> {
  const at = (await entityAt(b.admin, id))!;
  const r = await fetch(`${b.admin}/api/cellapps/${at.cellapp}`);
  return ((await r.json()) as { address: string }).address;
}
