/** The client URL a baseapp announces: its --public-host when given, so that clients on other machines can use it. */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("--public-host names the host of the baseapp's clientUrl, and clients connect through it", opts, async () => {
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
  const admin = mgr.ready.admin!;
  await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
  await procs.start(
    ["--role=base", "--port=0", "--client-port=0", "--public-host=localhost", `--mgr=${mgr.ready.address}`],
    { env: { SEAMLESS_KV: ":memory:" } },
  );
  const url = await waitFor("the baseapp's clientUrl in /api/cluster", async () => {
    const c = (await api(admin, "/api/cluster")).body as ClusterView;
    return c.processes.find((p) => p.role === "baseapp")?.clientUrl;
  }, 30_000);
  assert.match(url, /^ws:\/\/localhost:\d+\/$/);
  const c = await connect(url, { name: "far-away", password: "pw" }, { registry });
  assert.ok(c.player.id > 0);
  c.close();
});
