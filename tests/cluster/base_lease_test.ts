/**
 * The baseapps' lease on their bases (core/wire/lease.ts, base/cluster/base_fence.ts), on test hosts: a baseapp cut off from the
 * cellappmgr (every packet between the two dropped) while it still reaches the cellapp and the other baseapp stops
 * acting for its bases before the cellappmgr declares it dead and the other baseapp restores them from their
 * backups. Its client stays connected, and what the client asks of its cell waits instead of reaching the cell for a
 * base no longer its own; healed, it is fenced and its client resumes on the other baseapp. Without a lease
 * (`--mgr-lease=0`) it forwards the client's calls to the cell after its bases were restored elsewhere, and the
 * cellapp refuses them.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { type Host, Hosts, hostsUnavailable } from "../../testing/hosts.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { cellReady, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const why = await hostsUnavailable();
if (why) console.log(`tests/cluster/base_lease_test.ts skipped: ${why}`);

const SECRET = "base-lease-test-secret";
const TOKEN = "base-lease-test-token";

/** The time (ms since the epoch) of the first line of `lines` that includes every one of `parts`, or null. */
function when(lines: readonly string[], ...parts: string[]): number | null {
  const line = lines.find((l) => parts.every((p) => l.includes(p)));
  return line ? Date.parse(line.split(" ")[0]) : null;
}

/** The cellapp's refusals of messages from a baseapp for an entity whose base is elsewhere. */
function refusals(cell: Proc): string[] {
  return cell.stderr.filter((l) => l.includes("whose base is at"));
}

async function cutOff(lease: "default" | "none"): Promise<void> {
  await using hosts = await Hosts.create(["mgr", "cell", "base1", "base2", "client"]);
  await using procs = new Procs();
  const [mgrHost, cellHost, base1Host, base2Host, clientHost] = hosts.hosts;
  const cluster = await startCluster(procs, {
    mgrAt: hosts.place(mgrHost),
    mgrFlags: [`--secret=${SECRET}`, `--admin-token=${TOKEN}`, "--npcs=0"],
    cellAt: () => hosts.place(cellHost),
    cellFlags: [`--secret=${SECRET}`],
    reachAdmin: (admin) => hosts.forward(clientHost, admin),
    adminToken: TOKEN,
  });
  const cellapp = cluster.cellapps[0];
  const baseapps = async () =>
    ((await api(cluster.admin, "/api/cluster", cluster.adminInit)).body as ClusterView).processes
      .filter((p) => p.role === "baseapp");
  // Clients in this process reach the baseapps only through forwards: each baseapp names its forward as its client
  // URL, so that the baseapps it lists to its clients (where they resume) are reachable from here.
  const urls = await Promise.all(
    [base1Host, base2Host].map((h) => hosts.forward(clientHost, `ws://${h.address}:7400/`)),
  );
  const startBase = (h: Host, url: string) =>
    procs.start([
      "--role=base",
      `--host=${h.address}`,
      "--port=7300",
      "--client-port=7400",
      `--client-url=${url}`,
      `--mgr=${cluster.mgrAddress}`,
      `--secret=${SECRET}`,
      ...(lease === "none" ? ["--mgr-lease=0"] : []),
    ], { wrap: hosts.wrap(h) });
  const [base1, base2] = await Promise.all([startBase(base1Host, urls[0]), startBase(base2Host, urls[1])]);
  await waitFor("both baseapps registered", async () => (await baseapps()).filter((p) => p.clientUrl).length === 2);
  const victim = (await baseapps()).find((p) => p.pid === base1.pid)!;

  const player: Client = await connect(urls[0], { name: `cut-${lease}`, password: "pw" }, { registry });
  const resumed: string[] = [];
  player.on("resumed", (url: string) => resumed.push(url));
  try {
    await cellReady(player);
    const id = player.player.id;
    player.callCell(null, "raiseCounter");
    await waitFor("the counter raised", () => player.player.props.counter === 1, 10_000);
    await waitFor("the other baseapp listed to the client", () => player.resumeToken);
    await waitFor(
      "the other baseapp keeps the player's backup",
      () => base2.stderr.some((l) => l.includes(`first of Avatar ${id}`)),
      10_000,
    );
    // A backup period and a half more: the latest backup carries the counter and the token.
    await new Promise((r) => setTimeout(r, 1500));

    // Nothing passes between the cellappmgr and baseapp 1; both still reach the cellapp and baseapp 2.
    await hosts.block(base1Host, mgrHost);
    await hosts.block(mgrHost, base1Host);
    const deadAt = await waitFor(
      "the cellappmgr to declare baseapp 1 dead",
      () => when(cluster.mgr.stderr, `baseapp ${victim.id} (pid ${victim.pid}) left`),
      15_000,
    );
    await waitFor(
      "baseapp 2 to restore the player",
      () => base2.stderr.some((l) => l.includes(`Avatar ${id} restored from its backup`)),
      10_000,
    );
    // Its client, still connected to baseapp 1, goes on asking its cell for things.
    const asking = setInterval(() => player.callCell(null, "raiseCounter"), 200);
    try {
      if (lease === "none") {
        // The trade-off's other side: baseapp 1 acts on for a base restored elsewhere; only the cellapp stops it.
        await waitFor("the cellapp refusing baseapp 1's calls", () => refusals(cellapp).length > 0, 10_000);
        assert.equal(when(base1.stderr, "lease lapsed"), null, "no lease to lapse");
        return;
      }
      const lapsedAt = when(base1.stderr, "lease lapsed", "write nothing and send nothing");
      assert.ok(lapsedAt !== null, `baseapp 1 says its lease lapsed:\n${base1.stderr.slice(-15).join("\n")}`);
      assert.ok(
        lapsedAt < deadAt,
        `it stopped acting (${new Date(lapsedAt).toISOString()}) before it was declared dead (${
          new Date(deadAt).toISOString()
        })`,
      );
      console.log(`lease lapsed ${deadAt - lapsedAt} ms before the cellappmgr declared baseapp 1 dead`);
      // Ten calls, each a chance for the cellapp to refuse one, and for the counter to move.
      await new Promise((r) => setTimeout(r, 2000));
      assert.deepEqual(refusals(cellapp), [], "no call of baseapp 1 reached the cell after the restore");
      assert.equal(player.player.props.counter, 1, "the counter did not move");
      assert.equal(player.closed, false, "the client stays connected meanwhile");
    } finally {
      clearInterval(asking);
      // Healed: baseapp 1 is told it was declared dead, and its client resumes on baseapp 2.
      await hosts.unblock(base1Host, mgrHost);
      await hosts.unblock(mgrHost, base1Host);
    }
    await waitFor("baseapp 1 fenced", () => base1.stderr.some((l) => l.includes("fenced:")), 15_000);
    const after = base1.stderr.slice(base1.stderr.findIndex((l) => l.includes("lease lapsed")));
    const fenced = after.findIndex((l) => l.includes("fenced:"));
    assert.ok(
      !after.slice(0, fenced).some((l) => l.includes("confirmed this baseapp again")),
      `it never acted again before it was fenced:\n${after.slice(0, fenced + 1).join("\n")}`,
    );
    await waitFor("the client resumed on baseapp 2", () => resumed.length > 0, 15_000);
    assert.deepEqual(resumed, [urls[1]]);
    assert.equal(player.player.id, id, "its own entity");
    player.callCell(null, "raiseCounter");
    await waitFor("the counter raised through baseapp 2", () => player.player.props.counter === 2, 10_000);
    assert.deepEqual(refusals(cellapp), [], "and no call of baseapp 1 reached the cell");
  } catch (e) {
    for (const p of procs.all) {
      console.error(`${p.ready.role} ${p.ready.address}:\n  ${p.stderr.slice(-20).join("\n  ")}`);
    }
    throw e;
  } finally {
    player.close();
  }
}

Deno.test(
  "a baseapp cut off from the cellappmgr stops acting for its bases before they are restored elsewhere; " +
    "healed, it is fenced and its client resumes there",
  { ...opts, ignore: why !== null },
  () => cutOff("default"),
);

Deno.test(
  "without a lease (--mgr-lease=0) a baseapp cut off from the cellappmgr forwards its client's calls after its " +
    "bases were restored elsewhere",
  { ...opts, ignore: why !== null },
  () => cutOff("none"),
);
