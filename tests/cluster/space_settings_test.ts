/**
 * A space's own AoI and ghost radius, set at creation and changed by PATCH /api/spaces/:id, checked against the
 * ghost rule, reach every cellapp of the space: an entity is ghosted as deep as the space says, not the cellapps'.
 */
import assert from "node:assert/strict";
import type { CellEntityView, EntityView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const send = (method: string, body: unknown): RequestInit => ({
  method,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
type ErrorBody = { error: { message: string } };

Deno.test("a space's AoI and ghost radius: checked, shown, and followed by both cellapps", opts, async () => {
  await using procs = new Procs();
  const radii = ["--aoi-radius=40", "--ghost-radius=60"];
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", ...radii]);
  const admin = mgr.ready.admin!;
  const flags = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, ...radii];
  await Promise.all([procs.start(flags), procs.start(flags)]);
  await waitFor("two cellapps", async () => {
    const p = ((await api(admin, "/api/cluster")).body as { processes: { role: string }[] }).processes;
    return p.filter((x) => x.role === "cellapp").length === 2;
  });

  const bad = await api(admin, "/api/spaces", send("POST", { bounds: [0, 0, 1000, 200], cells: 2, aoiRadius: 100 }));
  assert.equal(bad.status, 400, JSON.stringify(bad.body));
  const why = (bad.body as ErrorBody).error.message;
  assert.match(why, /ghostRadius 60 m \(the space's current or the cluster's\) is less than aoiRadius 100 m/);
  assert.match(why, /use a ghostRadius of at least 115 m or an aoiRadius of at most 45 m/);
  const negative = await api(admin, "/api/spaces", send("POST", { bounds: [0, 0, 10, 10], ghostRadius: -5 }));
  assert.equal(negative.status, 400);

  const made = await api(
    admin,
    "/api/spaces",
    send("POST", { bounds: [0, 0, 1000, 200], cells: 2, aoiRadius: 40, ghostRadius: 200 }),
  );
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = (made.body as { id: number }).id;
  const space = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
  assert.deepEqual(space.settings, { aoiRadius: 40, ghostRadius: 200 });
  const [left, right] = space.cells.map((c) => c.cellapp);
  assert.notEqual(left, right);

  // 150 m from the border at x = 500: ghosted with the space's 200 m, never with the cellapps' 60 m.
  const spawned = await api(
    admin,
    `/api/spaces/${id}/entities`,
    send("POST", { entities: [{ type: "NPC", count: 1, position: [350, 0, 100] }] }),
  );
  assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
  const npc = await waitFor("the NPC", async () => {
    const list = (await api(admin, `/api/cellapps/${left}/cells/${id}`)).body as { entities: CellEntityView[] };
    return list.entities.find((e) => e.real) ?? null;
  });
  const ghosts = async () => ((await api(admin, `/api/entities/${npc.id}`)).body as EntityView).ghosts;
  await waitFor("a ghost on the other cellapp, 150 m from the border", async () => (await ghosts())[0] === right);

  const tooSmall = await api(admin, `/api/spaces/${id}`, send("PATCH", { ghostRadius: 50 }));
  assert.equal(tooSmall.status, 400, JSON.stringify(tooSmall.body));
  assert.match((tooSmall.body as ErrorBody).error.message, new RegExp(`space ${id}: ghostRadius 50 m is less than`));
  const aoiTooBig = await api(admin, `/api/spaces/${id}`, send("PATCH", { aoiRadius: 190 }));
  assert.equal(aoiTooBig.status, 400);
  assert.match((aoiTooBig.body as ErrorBody).error.message, /or an aoiRadius of at most 185 m/);
  assert.deepEqual(((await api(admin, `/api/spaces/${id}`)).body as SpaceView).settings, {
    aoiRadius: 40,
    ghostRadius: 200,
  }, "a refused change changes nothing");

  const patched = await api(admin, `/api/spaces/${id}`, send("PATCH", { ghostRadius: 100 }));
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  assert.deepEqual((patched.body as SpaceView).settings, { aoiRadius: 40, ghostRadius: 100 });
  await waitFor(
    "the ghost to go once the space's ghost radius is 100 m",
    async () => (await ghosts()).length === 0,
    15_000,
  );
  const back = await api(admin, `/api/spaces/${id}`, send("PATCH", { ghostRadius: 300, aoiRadius: 200 }));
  assert.equal(back.status, 200, JSON.stringify(back.body));
  assert.deepEqual((back.body as SpaceView).settings, { aoiRadius: 200, ghostRadius: 300 });
  await waitFor("the ghost back with 300 m", async () => (await ghosts())[0] === right);
});
