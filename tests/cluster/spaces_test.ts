import assert from "node:assert/strict";
import type { CellAppView, CellEntityView, EntityView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const json = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
/** A DELETE as a client that means it sends: mutating requests carry the JSON content type. */
const del: RequestInit = { method: "DELETE", headers: { "content-type": "application/json" } };

async function cluster(
  procs: Procs,
  cellapps: number,
  mgrFlags: string[] = [],
): Promise<{ mgr: Proc; admin: string; cells: Proc[] }> {
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", ...mgrFlags]);
  const admin = mgr.ready.admin!;
  const cells = await Promise.all(
    Array.from({ length: cellapps }, () => procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`])),
  );
  await waitFor("the cellapps and the default space", async () => {
    const spaces = (await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] };
    const procsUp =
      ((await api(admin, "/api/cluster")).body as { processes: unknown[] }).processes.length === cellapps + 1;
    return procsUp && spaces.spaces.some((s) => s.id === 1);
  });
  return { mgr, admin, cells };
}

Deno.test(
  "a space of 1,000 wandering NPCs ticks at 10 Hz, lists moving entities, and DELETE frees them",
  opts,
  async () => {
    await using procs = new Procs();
    const { admin } = await cluster(procs, 1);
    const created = await api(
      admin,
      "/api/spaces",
      json({ bounds: [0, 0, 1000, 1000], cells: 1, entities: [{ type: "NPC", count: 1000 }] }),
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: number }).id;
    assert.ok(id > 1);

    const space = await waitFor(
      "a measured tick rate of at least 9.5",
      async () => {
        const s = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
        return s.cells[0]?.tickRate >= 9.5 && s.cells[0].reals === 1000 ? s : null;
      },
      15_000,
      250,
    );
    const cell = space.cells[0];
    assert.deepEqual(space.bounds, [0, 0, 1000, 1000]);
    assert.deepEqual(space.tree, { cell: { id: 1, cellapp: cell.cellapp } });
    assert.deepEqual(cell.rect, [0, 0, 1000, 1000]);
    assert.ok(cell.tickMsP99 >= cell.tickMsP50 && cell.tickMsP50 > 0, JSON.stringify(cell));
    assert.ok(cell.load > 0 && cell.load < 1, `load ${cell.load}`);

    const list = async () =>
      ((await api(admin, `/api/cellapps/${cell.cellapp}/cells/${id}`)).body as { entities: CellEntityView[] }).entities;
    const first = await list();
    assert.equal(first.length, 1000);
    assert.ok(first.every((e) => e.type === "NPC" && e.real && e.position.length === 3));
    for (const e of first) {
      assert.ok(
        e.position[0] >= -20 && e.position[0] <= 1020 && e.position[2] >= -20 && e.position[2] <= 1020,
        `${e.id} near the space`,
      );
    }
    const moved = await waitFor("entities to move", async () => {
      const now = new Map((await list()).map((e) => [e.id, e.position]));
      return first.filter((e) => JSON.stringify(now.get(e.id)) !== JSON.stringify(e.position)).length > 100;
    });
    assert.ok(moved);

    const where = (await api(admin, `/api/entities/${first[0].id}`)).body as EntityView;
    assert.equal(where.spaceId, id);
    assert.equal(where.cellapp, cell.cellapp);
    assert.equal(where.type, "NPC");

    const app = (await api(admin, `/api/cellapps/${cell.cellapp}`)).body as CellAppView;
    assert.ok(app.cells.some((c) => c.spaceId === id && c.reals === 1000));

    const gone = await api(admin, `/api/spaces/${id}`, del);
    assert.equal(gone.status, 202);
    assert.equal((await api(admin, `/api/spaces/${id}`)).status, 404);
    await waitFor(
      "the cell to go",
      async () => (await api(admin, `/api/cellapps/${cell.cellapp}/cells/${id}`)).status === 404,
    );
    const after = (await api(admin, `/api/cellapps/${cell.cellapp}`)).body as CellAppView;
    assert.ok(!after.cells.some((c) => c.spaceId === id));
    assert.equal((await api(admin, `/api/entities/${first[0].id}`)).status, 404);
  },
);

Deno.test(
  "admin space routes: validation names the field, unknown ids are 404, the default space stays",
  opts,
  async () => {
    await using procs = new Procs();
    const { admin } = await cluster(procs, 1);
    const bad = async (body: unknown, re: RegExp) => {
      const r = await api(admin, "/api/spaces", json(body));
      assert.equal(r.status, 400, JSON.stringify(r.body));
      const err = (r.body as { error: { code: string; message: string } }).error;
      assert.equal(err.code, "bad_request");
      assert.match(err.message, re);
    };
    await bad({}, /^bounds: /);
    await bad({ bounds: [0, 0, 10] }, /^bounds: /);
    await bad({ bounds: [10, 0, 0, 10] }, /^bounds: must be \[minX, minZ, maxX, maxZ\] with min < max/);
    await bad({ bounds: [0, 0, 10, 10], cells: 0 }, /^cells: /);
    await bad(
      { bounds: [0, 0, 10, 10], entities: [{ type: "Dragon", count: 1 }] },
      /^entities\.0\.type: unknown entity type/,
    );
    await bad({ bounds: [0, 0, 10, 10], entities: [{ type: "NPC", count: -1 }] }, /^entities\.0\.count: /);
    await bad({ bounds: [0, 0, 10, 10], colour: "red" }, /Unrecognized key: "colour"/);
    const malformed = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{nope",
    });
    assert.equal(malformed.status, 400);
    const form = await api(admin, "/api/spaces", { method: "POST", body: "bounds=1" });
    assert.equal(form.status, 415);
    assert.match((form.body as { error: { message: string } }).error.message, /Content-Type: application\/json/);
    // More cells than cellapps: one cellapp runs several cells of the space.
    const twoOnOne = await api(admin, "/api/spaces", json({ bounds: [0, 0, 10, 10], cells: 2 }));
    assert.equal(twoOnOne.status, 201, JSON.stringify(twoOnOne.body));
    const twoId = (twoOnOne.body as { id: number }).id;
    const two = (await api(admin, `/api/spaces/${twoId}`)).body as SpaceView;
    assert.deepEqual(two.cells.map((c) => c.id), [1, 2]);
    assert.equal(new Set(two.cells.map((c) => c.cellapp)).size, 1);
    assert.equal((await api(admin, `/api/spaces/${twoId}`, del)).status, 202);

    for (const path of ["/api/spaces/999", "/api/cellapps/999", "/api/cellapps/1/cells/999", "/api/entities/999999"]) {
      const r = await api(admin, path);
      assert.equal(r.status, 404, path);
      assert.equal((r.body as { error: { code: string } }).error.code, "not_found");
    }
    assert.equal((await api(admin, "/api/spaces/abc")).status, 400);
    assert.equal((await api(admin, "/api/spaces/999", del)).status, 404);
    const def = await api(admin, "/api/spaces/1", del);
    assert.equal(def.status, 409);
    assert.match((def.body as { error: { message: string } }).error.message, /default space/);
    assert.equal((await api(admin, "/api/spaces/1")).status, 200);
  },
);

Deno.test(
  "entity ids are unique across cellapps and survive a cellappmgr restart; spaces are adopted again",
  opts,
  async () => {
    await using procs = new Procs();
    const dir = await Deno.makeTempDir();
    try {
      const kv = `--kv=${dir}/mgr.kv`;
      const { mgr, admin } = await cluster(procs, 2, [kv]);
      const a =
        (await api(admin, "/api/spaces", json({ bounds: [0, 0, 100, 100], entities: [{ type: "NPC", count: 30 }] })))
          .body as { id: number };
      const b =
        (await api(admin, "/api/spaces", json({ bounds: [0, 0, 100, 100], entities: [{ type: "NPC", count: 30 }] })))
          .body as { id: number };
      const ids = async (space: number) => {
        const s = (await api(admin, `/api/spaces/${space}`)).body as SpaceView;
        const cellapp = s.cells[0].cellapp;
        return {
          cellapp,
          ids: ((await api(admin, `/api/cellapps/${cellapp}/cells/${space}`)).body as { entities: CellEntityView[] })
            .entities.map((e) => e.id),
        };
      };
      const ia = await ids(a.id);
      const ib = await ids(b.id);
      assert.notEqual(ia.cellapp, ib.cellapp, "the second space went to the less loaded cellapp");
      assert.equal(new Set([...ia.ids, ...ib.ids]).size, 60, "no id is used twice");
      const highest = Math.max(...ia.ids, ...ib.ids);

      mgr.kill("SIGKILL");
      await mgr.status;
      const port = mgr.ready.address!.split(":").pop();
      const mgr2 = await procs.start(["--role=mgr", `--port=${port}`, "--admin-port=0", kv]);
      const admin2 = mgr2.ready.admin!;
      await waitFor("spaces adopted after the restart", async () => {
        const s = ((await api(admin2, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces.map((s) => s.id);
        return [1, a.id, b.id].every((id) => s.includes(id));
      }, 10_000);
      // A new cellapp has no ids of its own: everything it gets comes from the restarted cellappmgr.
      const fresh3 = await procs.start(["--role=cell", "--port=0", `--mgr=${mgr2.ready.address}`]);
      await waitFor("the new cellapp", async () => {
        const p = ((await api(admin2, "/api/cluster")).body as { processes: { pid: number }[] }).processes;
        return p.some((x) => x.pid === fresh3.pid);
      });
      const c = await api(
        admin2,
        "/api/spaces",
        json({ bounds: [0, 0, 100, 100], entities: [{ type: "NPC", count: 10 }] }),
      );
      assert.equal(c.status, 201, JSON.stringify(c.body));
      const cid = (c.body as { id: number }).id;
      assert.ok(cid > b.id, `space id ${cid} is new`);
      const s = (await api(admin2, `/api/spaces/${cid}`)).body as SpaceView;
      const third = ((await api(admin2, "/api/cluster")).body as { processes: { pid: number; id: number }[] }).processes
        .find((x) => x.pid === fresh3.pid)!;
      assert.equal(s.cells[0].cellapp, third.id, "the space went to the idle new cellapp");
      const fresh =
        ((await api(admin2, `/api/cellapps/${s.cells[0].cellapp}/cells/${cid}`)).body as { entities: CellEntityView[] })
          .entities;
      assert.equal(fresh.length, 10);
      assert.ok(fresh.every((e) => e.id > highest), "a restarted cellappmgr hands out no id already in use");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
