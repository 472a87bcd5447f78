/** End to end with real processes: cellappmgr, a cellapp and a baseapp; clients through the SDK. */
import assert from "node:assert/strict";
import { decode } from "@msgpack/msgpack";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("a player logs in through the clientUrl, gets a cell entity, logs out into KV and back", opts, async () => {
  await using procs = new Procs();
  const dir = await Deno.makeTempDir();
  const kvPath = `${dir}/base.kv`;
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
  const admin = mgr.ready.admin!;
  await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
  // This test puts its player where it wants it: the baseapp lets clients choose (never a new space).
  await procs.start(["--role=base", "--port=0", `--mgr=${mgr.ready.address}`, "--client-spawn"], {
    env: { SEAMLESS_KV: kvPath },
  });
  const url = await waitFor("the baseapp's clientUrl in /api/cluster", async () => {
    const c = (await api(admin, "/api/cluster")).body as ClusterView;
    return c.processes.find((p) => p.role === "baseapp")?.clientUrl;
  }, 30_000);
  await waitFor("the default space", async () => {
    const s = (await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] };
    return s.spaces.some((x) => x.id === 1);
  }, 30_000);

  const c = await connect(url, { name: "e2e", password: "pw", position: { x: 12, y: 0, z: -7 } }, { registry });
  await waitFor("cellReady", () => c.player.spaceId === 1, 10_000);
  const id = c.player.id;
  const where = (await api(admin, `/api/entities/${id}`)).body as { position?: number[] };
  assert.deepEqual(where.position, [12, 0, -7], JSON.stringify(where));

  // A client cannot make a space: asking for space 0 puts it in the default space.
  const other = await connect(url, { name: "e2e-new-space", password: "pw", spaceId: 0 }, { registry });
  await waitFor("a cell entity in the default space", () => other.player.spaceId === 1, 10_000);
  const spaces = (await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] };
  assert.deepEqual(spaces.spaces.map((s) => s.id), [1]);

  c.move({ x: 13, y: 0, z: -7 }, [0.5, 0, 0]);
  await waitFor("the move on the cell", async () => {
    const e = (await api(admin, `/api/entities/${id}`)).body as { position?: number[] };
    return e.position?.[0] === 13;
  });
  await c.logout();
  await waitFor("the cell entity gone", async () => (await api(admin, `/api/entities/${id}`)).status === 404);

  using kv = await Deno.openKv(kvPath);
  const meta = (await kv.get<{ position: number[]; cellChunks: number }>(["entity", id, "meta"])).value!;
  assert.deepEqual(meta.position, [13, 0, -7]);
  const cell = decode((await kv.get<Uint8Array>(["entity", id, "cell", 0])).value!) as Record<string, unknown>;
  assert.equal(cell.playerName, "e2e", "the cell's persistent state came back from the cellapp");
  assert.equal(cell.level, 1);

  const again = await connect(url, { name: "e2e", password: "pw" }, { registry });
  assert.equal(again.player.id, id);
  await waitFor("cellReady at the saved position", () => again.player.spaceId === 1 && again.player.position.x === 13);
  again.close();
  other.close();
});
