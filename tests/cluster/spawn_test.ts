/**
 * Spawning through the admin API: ids are reserved before the space exists,
 * so spawns at once never race; sizes are capped per request and per
 * cluster; a spawn that fails removes what it made.
 */
import assert from "node:assert/strict";
import type { CellEntityView, ClusterView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

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

Deno.test(
  "POST /api/spaces/:id/entities spawns into a live space, at a point when given; bad requests are refused, naming why",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--spawn-limit=500"]);
    const admin = mgr.ready.admin!;
    const flags = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`];
    await Promise.all([procs.start(flags), procs.start(flags)]);
    await waitFor("two cellapps", async () => {
      const p = ((await api(admin, "/api/cluster")).body as ClusterView).processes;
      return p.filter((x) => x.role === "cellapp").length === 2;
    });
    const made = await api(admin, "/api/spaces", post({ bounds: [0, 0, 200, 100], cells: 2 }));
    assert.equal(made.status, 201, message(made.body));
    const id = (made.body as { id: number }).id;
    const s = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
    const right = s.cells.find((c) => c.rect[0] === 100)!;

    const at = await api(
      admin,
      `/api/spaces/${id}/entities`,
      post({
        entities: [{ type: "NPC", count: 25, position: [150, 0, 50], props: { wanderRadius: 0 } }, {
          type: "NPC",
          count: 10,
        }],
      }),
    );
    assert.equal(at.status, 201, message(at.body));
    assert.deepEqual(at.body, { spawned: 35 });
    const list = await waitFor("the spawned entities listed", async () => {
      const r = await api(admin, `/api/cellapps/${right.cellapp}/cells/${id}`);
      const es = (r.body as { entities: CellEntityView[] }).entities.filter((e) => e.real);
      return es.filter((e) => e.position[0] === 150 && e.position[2] === 50).length === 25 ? es : null;
    });
    assert.ok(list.every((e) => e.cell === right.id));
    await waitFor(
      "35 entities in the space",
      async () => (await spaces(admin)).find((x) => x.id === id)?.entities === 35,
    );

    const cases: [string, unknown, number, RegExp][] = [
      [`/api/spaces/${id}/entities`, { entities: [{ type: "NPC", count: 1, position: [500, 0, 0] }] }, 400, /outside/],
      [`/api/spaces/${id}/entities`, { entities: [{ type: "Nope", count: 1 }] }, 400, /unknown entity type/],
      [`/api/spaces/${id}/entities`, { entities: [] }, 400, /entities/],
      [`/api/spaces/${id}/entities`, { entities: [{ type: "NPC", count: 501 }] }, 400, /spawn limit of 500/],
      [`/api/spaces/${id}/entities`, { entities: [{ type: "NPC", count: 1, props: { hp: "x" } }] }, 400, /props\.hp/],
      [`/api/spaces/${id}/entities`, { entities: [{ type: "NPC", count: 1, position: [1, 2] }] }, 400, /position/],
      [`/api/spaces/9999/entities`, { entities: [{ type: "NPC", count: 1 }] }, 404, /no space 9999/],
    ];
    for (const [path, body, status, why] of cases) {
      const r = await api(admin, path, post(body));
      assert.equal(r.status, status, `${JSON.stringify(body)}: ${message(r.body)}`);
      assert.match(message(r.body), why, JSON.stringify(body));
    }
    // Balancing switched off and on for the space; a bad body is refused.
    const patch = (body: unknown) => api(admin, `/api/spaces/${id}`, { ...post(body), method: "PATCH" });
    const off = await patch({ balance: false });
    assert.equal(off.status, 200, message(off.body));
    assert.equal((off.body as SpaceView).balance.enabled, false);
    assert.equal(((await patch({ balance: true })).body as SpaceView).balance.enabled, true);
    assert.equal((await patch({ balance: "no" })).status, 400);
    assert.equal((await patch({ other: 1 })).status, 400);
    assert.equal((await api(admin, "/api/spaces/9999", { ...post({ balance: false }), method: "PATCH" })).status, 404);
    assert.equal((await spaces(admin)).find((x) => x.id === id)?.entities, 35, "nothing made by a refused request");
  },
);
