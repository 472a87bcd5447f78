/**
 * Baseapp fencing (docs/faults.md, "Fencing and generations"): a baseapp stopped (SIGSTOP) past the cellappmgr's dead
 * timeout has its bases restored on the other baseapp from their backups. When it wakes it is told it was fenced: it
 * drops every base without a write to Deno KV or a word to the cells, closes its clients with a code that makes the SDK
 * resume on the other baseapp, and registers again, empty. Real processes, one shared KV file, an SDK client.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellEntitiesOf, cellReady, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const secret = "--secret=base fencing test";

async function baseapps(admin: string): Promise<ClusterView["processes"]> {
  return ((await api(admin, "/api/cluster")).body as ClusterView).processes.filter((p) => p.role === "baseapp");
}

Deno.test(
  "a baseapp stopped past the dead timeout is fenced when it wakes: it drops its bases unwritten, its client " +
    "resumes on the other baseapp, and nothing it still had takes effect",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const kvPath = `${dir.path}/bases.kv`;
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    // A saves every second: woken, it would write its stale copy at once. B's saves are an hour apart.
    const a = await startBaseProcess(procs, cluster, [secret, "--autosave=1"], { SEAMLESS_KV: kvPath }, true);
    const b = await startBaseProcess(procs, cluster, [secret, "--autosave=3600"], { SEAMLESS_KV: kvPath }, true);
    const before = (await baseapps(cluster.admin)).find((p) => p.clientUrl === a.clientUrl)!;
    const bId = (await baseapps(cluster.admin)).find((p) => p.clientUrl === b.clientUrl)!.id;

    const ann = await connect(a.clientUrl, { name: "ann", password: "ann pw" }, {
      registry,
      resume: { withinMs: 20_000 },
    });
    const resumed: string[] = [];
    ann.on("resumed", (url: string) => resumed.push(url));
    assert.equal(await cellReady(ann), 1);
    const id = ann.player.id;
    for (let i = 0; i < 2; i++) ann.callCell(null, "raiseCounter");
    await waitFor("ann's counter raised", () => ann.player.props.counter === 2, 10_000);
    await waitFor("the live baseapps listed to ann", () => ann.resumeToken);
    await waitFor("B keeps ann's backup", () => b.proc.stderr.some((l) => l.includes(`first of Avatar ${id}`)), 10_000);
    // A backup period and a half more: B's latest backup carries the counter and the token.
    await new Promise((r) => setTimeout(r, 1500));
    const db = await Deno.openKv(kvPath);
    try {
      await waitFor("ann saved by A", async () => (await db.get(["entity", id, "meta"])).versionstamp, 5000);

      a.proc.kill("SIGSTOP");
      try {
        await waitFor(
          "the cellappmgr to declare A dead",
          async () => !(await baseapps(cluster.admin)).some((p) => p.pid === a.proc.pid),
          10_000,
        );
        await waitFor(
          "B to restore ann",
          () => b.proc.stderr.some((l) => l.includes(`Avatar ${id} restored from its backup`)),
          10_000,
        );
        // A write the stopped baseapp gets when it wakes: it must not reach the cell.
        ann.callCell(null, "raiseCounter");
      } finally {
        const saved = (await db.get(["entity", id, "meta"])).versionstamp;
        a.proc.kill("SIGCONT");

        await waitFor("ann resumed on B", () => resumed.length > 0, 20_000);
        assert.deepEqual(resumed, [b.clientUrl]);
        const after = await waitFor("A registered again", async () => {
          const p = (await baseapps(cluster.admin)).find((p) => p.pid === a.proc.pid);
          return p && p.generation !== before.generation ? p : null;
        }, 10_000);
        assert.ok(after.generation! > before.generation!, "a later generation");
        assert.ok(
          a.proc.stderr.some((l) => l.includes("fenced:") && l.includes("Dropped 1 base(s) without writing them")),
          a.proc.stderr.slice(-20).join("\n"),
        );
        // A second past A's autosave period: nothing of A's was written.
        await new Promise((r) => setTimeout(r, 1200));
        assert.equal((await db.get(["entity", id, "meta"])).versionstamp, saved, "A wrote nothing to KV after waking");
      }
    } finally {
      db.close();
    }

    assert.equal(ann.player.id, id, "its own entity");
    await waitFor("ann's counter as backed up, A's late raise not applied", () => ann.player.props.counter === 2);
    ann.callCell(null, "raiseCounter");
    await waitFor("ann's counter raised through B", () => ann.player.props.counter === 3, 10_000);
    const cells = await cellEntitiesOf(cluster.admin, id);
    assert.equal(cells.filter((e) => e.real).length, 1, "one cell entity");
    const found = (await api(cluster.admin, `/api/entities/${id}`)).body as { base: number | null };
    assert.equal(found.base, bId, "its base is B's");
    // Nothing from A comes after: the counter stays as B has it.
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(ann.player.props.counter, 3);
    ann.close();
  },
);

Deno.test(
  "a baseapp stopped for less than the dead timeout holds back until the cellappmgr confirms it, then serves on",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const a = await startBaseProcess(procs, cluster, [secret], {}, true);
    const before = (await baseapps(cluster.admin)).find((p) => p.clientUrl === a.clientUrl)!;
    const ann = await connect(a.clientUrl, { name: "ann", password: "ann pw" }, { registry });
    assert.equal(await cellReady(ann), 1);
    ann.callCell(null, "raiseCounter");
    await waitFor("ann's counter raised", () => ann.player.props.counter === 1, 10_000);

    // Over half the dead timeout (2 s), under all of it.
    a.proc.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, 1300));
    ann.callCell(null, "raiseCounter");
    a.proc.kill("SIGCONT");
    await waitFor("A held back after the stall", () => a.proc.stderr.some((l) => l.includes("this baseapp stalled")));
    await waitFor("and confirmed again", () => a.proc.stderr.some((l) => l.includes("confirmed this baseapp again")));
    await waitFor("the call made during the stall reaches the cell", () => ann.player.props.counter === 2, 10_000);
    const after = (await baseapps(cluster.admin)).find((p) => p.pid === a.proc.pid)!;
    assert.equal(after.generation, before.generation, "still the same member");
    assert.ok(!a.proc.stderr.some((l) => l.includes("fenced:")));
    assert.equal(ann.closed, false);
    ann.close();
  },
);
