/**
 * One cluster over many test hosts (testing/hosts.ts): a cellappmgr, two cellapps and two baseapps, each in
 * its own network namespace bound to that namespace's address, and players connecting through the SDK from a client
 * host of their own. What the cellappmgr announces must be each process's own address, and a player crosses between
 * cells on different cellapps.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import { type Host, Hosts, hostsUnavailable } from "../../testing/hosts.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const why = await hostsUnavailable();
if (why) console.log(`tests/hosts skipped: ${why}`);
const opts = { ignore: why !== null, sanitizeOps: false, sanitizeResources: false };

const SECRET = "hosts-test-secret";
const TOKEN = "hosts-test-token";
const PUBLIC = "play.example.test";

/**
 * Where each process binds: its host's address on a free port, or (as on machines of their own, docs/operations.md's
 * deployment) every interface on the same fixed ports.
 */
type Binding = "own address" | "wildcard, same ports";

async function clusterOnHosts(binding: Binding): Promise<void> {
  await using hosts = await Hosts.create(["mgr", "cell1", "cell2", "base1", "base2", "client"]);
  await using procs = new Procs();
  const [mgrHost, cell1, cell2, base1, base2, client] = hosts.hosts;
  const wild = binding === "wildcard, same ports";
  const place = (h: Host, ports: string[]) =>
    wild ? { wrap: hosts.wrap(h), flags: ["--host=0.0.0.0", ...ports] } : hosts.place(h);
  const cluster = await startCluster(procs, {
    cellapps: 2,
    mgrAt: place(mgrHost, ["--port=7100", "--admin-port=8080"]),
    mgrFlags: [`--secret=${SECRET}`, `--admin-token=${TOKEN}`],
    cellAt: (i) => place([cell1, cell2][i], ["--port=7200"]),
    cellFlags: [`--secret=${SECRET}`, "--aoi-radius=100", "--ghost-radius=120"],
    reachAdmin: (admin) => hosts.forward(client, wild ? admin.replace("0.0.0.0", mgrHost.address) : admin),
    adminToken: TOKEN,
    mgrAddress: wild ? `${mgrHost.address}:7100` : undefined,
  });
  const call = (path: string, init: RequestInit = {}) =>
    api(cluster.admin, path, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...init.headers } });
  assert.equal((await api(cluster.admin, "/api/cluster")).status, 401, "the admin API wants its token");
  const baseFlags = [`--secret=${SECRET}`, "--max-speed=1000"];
  const basePorts = ["--port=7300", "--client-port=7400"];
  const b1 = await startBaseProcess(procs, cluster, baseFlags, {}, false, place(base1, basePorts));
  const b2 = await startBaseProcess(
    procs,
    cluster,
    [...baseFlags, `--public-host=${PUBLIC}`],
    {},
    false,
    place(base2, basePorts),
  );

  // Every process on its host's address, never loopback, and `ip netns exec` left the pid the process's own.
  const where = new Map([
    [cluster.mgr, mgrHost],
    [cluster.cellapps[0], cell1],
    [cluster.cellapps[1], cell2],
    [b1.proc, base1],
    [b2.proc, base2],
  ]);
  const bound = (h: Host) => wild ? "0.0.0.0" : h.address;
  for (const [p, h] of where) {
    assert.equal(p.ready.pid, p.pid, `${h.name}: the ready line's pid is the child's`);
    assert.match(p.ready.address!, new RegExp(`^${bound(h).replaceAll(".", "\\.")}:\\d+$`), h.name);
  }
  assert.match(cluster.mgr.ready.admin!, new RegExp(`^http://${bound(mgrHost).replaceAll(".", "\\.")}:\\d+`));
  const port1 = Number(new URL(b1.clientUrl).port), port2 = Number(new URL(b2.clientUrl).port);
  assert.equal(b1.clientUrl, `ws://${bound(base1)}:${port1}/`);
  assert.equal(b2.clientUrl, `ws://${PUBLIC}:${port2}/`, "--public-host names the client URL");
  // The cellappmgr lists every process at its host's address, whatever it bound.
  const view = (await call("/api/cluster")).body as ClusterView;
  assert.equal(view.processes.length, 5, JSON.stringify(view.processes));
  for (const [p, h] of where) {
    const seenAs = view.processes.find((v) => v.pid === p.pid);
    assert.ok(seenAs, `${h.name} (pid ${p.pid}) listed`);
    // The cellappmgr lists itself as bound: the others are given its address (--mgr) by whoever starts them.
    const shown = p === cluster.mgr ? bound(h) : h.address;
    assert.equal(seenAs.address, `${shown}:${p.ready.address!.split(":")[1]}`, `${h.name}'s announced address`);
  }
  const urls = view.processes.filter((v) => v.role === "baseapp").map((v) => v.clientUrl).sort();
  assert.deepEqual(urls, [`ws://${base1.address}:${port1}/`, b2.clientUrl].sort());

  // A space of two cells, one on each cellapp.
  const made = await call("/api/spaces", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ bounds: [0, 0, 600, 100], cells: 2 }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const spaceId = (made.body as { id: number }).id;
  const space = (await call(`/api/spaces/${spaceId}`)).body as SpaceView;
  assert.equal(new Set(space.cells.map((c) => c.cellapp)).size, 2, "one cell on each cellapp");
  const [left, right] = [...space.cells].sort((a, b) => a.rect[0] - b.rect[0]);
  const split = left.rect[2];

  // A player through each baseapp, both from the client host; each sees the other across the cells' border.
  const urlA = await hosts.forward(client, `ws://${base1.address}:${port1}/`);
  const urlB = await hosts.forward(client, `ws://${base2.address}:${port2}/`);
  const players: Client[] = [];
  try {
    const a = await connect(urlA, { name: "a", password: "pw", spaceId, position: { x: split - 40, y: 0, z: 50 } }, {
      registry,
    });
    players.push(a);
    const b = await connect(urlB, { name: "b", password: "pw", spaceId, position: { x: split + 40, y: 0, z: 50 } }, {
      registry,
    });
    players.push(b);
    assert.equal(await cellReady(a), spaceId);
    assert.equal(await cellReady(b), spaceId);
    await seen(a, b.player.id);
    await seen(b, a.player.id);
    const atA = await entityAt(cluster.admin, a.player.id, cluster.adminInit);
    const atB = await entityAt(cluster.admin, b.player.id, cluster.adminInit);
    assert.equal(atA?.cellapp, left.cellapp);
    assert.equal(atB?.cellapp, right.cellapp);
    assert.notEqual(atA?.base, atB?.base, "logged in through different baseapps");

    // A crosses onto the other cellapp's cell and stays in play: its counter still reaches B.
    a.move({ x: split + 20, y: 0, z: 50 });
    await waitFor("A real on the other cellapp", async () => {
      const e = await entityAt(cluster.admin, a.player.id, cluster.adminInit);
      return e?.cellapp === right.cellapp && e.position[0] === split + 20;
    }, 15_000);
    a.callCell(null, "raiseCounter");
    const aAtB = await seen(b, a.player.id);
    await waitFor("B to see A's counter after the crossing", () => aAtB.props.counter === 1, 10_000);
  } catch (e) {
    // What each process logged says which address went wrong.
    for (const p of procs.all) {
      console.error(`${p.ready.role} ${p.ready.address}:\n  ${p.stderr.slice(-30).join("\n  ")}`);
    }
    throw e;
  } finally {
    for (const c of players) c.close();
  }
}

Deno.test("hosts: a cluster with every process on its own host's address", opts, () => clusterOnHosts("own address"));

Deno.test(
  "hosts: a cluster with every process bound to every interface on the same ports, on hosts of their own",
  opts,
  () => clusterOnHosts("wildcard, same ports"),
);
