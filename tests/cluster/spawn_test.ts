/**
 * Spawning through the admin API: ids are reserved before the space exists,
 * so spawns at once never race; sizes are capped per request and per
 * cluster; a spawn that fails removes what it made.
 */
import assert from "node:assert/strict";
import type { ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { api, Procs } from "../helpers/procs.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

async function spaces(admin: string): Promise<SpaceSummaryView[]> {
  return ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
}

function message(body: unknown): string {
  return (body as { error?: { message?: string } }).error?.message ?? JSON.stringify(body);
}

Deno.test(
  "spawns at once each get their ids and their whole count; limits per request and per cluster",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start([
      "--role=mgr",
      "--port=0",
      "--admin-port=0",
      "--spawn-limit=3000",
      "--entity-limit=5000",
    ]);
    const admin = mgr.ready.admin!;
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
    await waitFor("the default space", async () => (await api(admin, "/api/spaces/1")).status === 200, 30_000);

    const body = { bounds: [0, 0, 500, 500], entities: [{ type: "NPC", count: 2000 }] };
    const [a, b] = await Promise.all([api(admin, "/api/spaces", post(body)), api(admin, "/api/spaces", post(body))]);
    assert.deepEqual([a.status, b.status], [201, 201], `${message(a.body)} / ${message(b.body)}`);
    const ids = [(a.body as { id: number }).id, (b.body as { id: number }).id];
    await waitFor("both spaces full", async () => {
      const s = await spaces(admin);
      return ids.every((id) => s.find((x) => x.id === id)?.entities === 2000);
    });

    // One request may not ask for more than the spawn limit, however it splits the count.
    const many = await api(
      admin,
      "/api/spaces",
      post({
        bounds: [0, 0, 10, 10],
        entities: Array.from({ length: 32 }, () => ({ type: "NPC", count: 100 })),
      }),
    );
    assert.equal(many.status, 400);
    assert.match(message(many.body), /3200 in one request is more than the spawn limit of 3000 \(--spawn-limit\)/);

    // The cluster holds 4,000; 1,001 more would pass 5,000.
    const over = await api(
      admin,
      "/api/spaces",
      post({ bounds: [0, 0, 10, 10], entities: [{ type: "NPC", count: 1001 }] }),
    );
    assert.equal(over.status, 409);
    assert.match(message(over.body), /holds 4000 entities .* entity limit of 5000 \(--entity-limit\)/);
    const fits = await api(
      admin,
      "/api/spaces",
      post({ bounds: [0, 0, 10, 10], entities: [{ type: "NPC", count: 1000 }] }),
    );
    assert.equal(fits.status, 201, message(fits.body));
    // Nothing half-made anywhere: every space holds what it asked for.
    const before = (await spaces(admin)).filter((s) => !s.isDefault).map((s) => s.entities);
    assert.equal(before.length, 3);
  },
);

Deno.test("a spawn whose cellapp dies removes what it made: one clear error, no half-filled space", opts, async () => {
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--spawn-limit=40000"]);
  const admin = mgr.ready.admin!;
  const cells = await Promise.all(
    [0, 1].map(() => procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`])),
  );
  await waitFor(
    "two cellapps",
    async () => ((await api(admin, "/api/cluster")).body as ClusterView).processes.length === 3,
  );
  await waitFor("the default space", async () => (await api(admin, "/api/spaces/1")).status === 200, 30_000);
  const processes = ((await api(admin, "/api/cluster")).body as ClusterView).processes;
  // The victim is the cellapp without the default space, so the test is about the new space only.
  const defaultApp = ((await api(admin, "/api/spaces/1")).body as { cells: { cellapp: number }[] }).cells[0].cellapp;
  const survivor = processes.find((p) => p.id === defaultApp)!;
  const victim = cells.find((c) => c.pid !== survivor.pid)!;

  const request = api(
    admin,
    "/api/spaces",
    post({ bounds: [0, 0, 1000, 1000], cells: 2, entities: [{ type: "NPC", count: 40000 }] }),
  );
  await waitFor("the spawn to start", () => mgr.stderr.some((l) => / created: 2 cell/.test(l)), 10_000, 2);
  victim.kill("SIGKILL");
  const res = await request;
  assert.equal(res.status, 503, `expected the spawn to fail, got ${res.status} ${message(res.body)}`);
  assert.match(message(res.body), /spawning the entities of space (\d+) failed: .*; the space was removed/);
  const id = Number(/space (\d+)/.exec(message(res.body))![1]);
  assert.ok(!(await spaces(admin)).some((s) => s.id === id), "the space is gone");
  await waitFor(
    "the survivor to drop its cell and entities",
    async () => (await api(admin, `/api/cellapps/${survivor.id}/cells/${id}`)).status === 404,
    10_000,
  );
});
