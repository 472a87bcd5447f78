import assert from "node:assert/strict";
import type { ProcessView, SpaceSummaryView, SpaceView } from "../../core/views.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const space = async (admin: string, id: number) => (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
const spaces = async (admin: string) =>
  ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
const cellappOf = async (admin: string, pid: number) =>
  ((await api(admin, "/api/cluster")).body as { processes: ProcessView[] }).processes.find((p) => p.pid === pid)?.id;

Deno.test(
  "a space whose only cellapp is SIGKILLed keeps its id and gets a cell on a live cellapp; with none alive it waits for one",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    const admin = mgr.ready.admin!;
    const join = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`];
    const apps: Proc[] = await Promise.all([procs.start(join), procs.start(join)]);
    const ids = await waitFor("both cellapps and the default space", async () => {
      const ids = await Promise.all(apps.map((p) => cellappOf(admin, p.pid)));
      return ids.every((i) => i !== undefined) && (await spaces(admin)).some((s) => s.id === 1)
        ? ids as number[]
        : null;
    });
    const created = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 500, 500], cells: 1 }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = (created.body as { id: number }).id;
    const before = await space(admin, id);
    assert.equal(before.cells.length, 1);
    // Placement follows measured load: the space may share the default space's cellapp, which then loses both.
    const doomed = before.cells[0].cellapp;
    const survivor = ids.find((i) => i !== doomed)!;

    apps[ids.indexOf(doomed)].kill("SIGKILL");
    const after = await waitFor("the space to get a cell on the surviving cellapp", async () => {
      const s = await space(admin, id);
      return s.cells?.length === 1 && s.cells[0].cellapp === survivor ? s : null;
    }, 5000);
    assert.deepEqual(after.bounds, [0, 0, 500, 500]);
    assert.deepEqual(after.cells[0].rect, [0, 0, 500, 500], "the new cell covers the whole space");
    assert.notEqual(after.cells[0].id, before.cells[0].id, "a new cell, not the dead one");
    await waitFor("the surviving cellapp to run the cell", async () => {
      const r = await api(admin, `/api/cellapps/${survivor}/cells/${id}`);
      return r.status === 200;
    }, 5000);

    // No cellapp at all: both spaces stay known, with the same ids, and no second default space appears.
    apps[ids.indexOf(survivor)].kill("SIGKILL");
    await waitFor(
      "the last cellapp to leave",
      async () => (await cellappOf(admin, apps[ids.indexOf(survivor)].pid)) === undefined,
      5000,
    );
    assert.deepEqual((await spaces(admin)).map((s) => [s.id, s.isDefault]), [[1, true], [id, false]]);

    const late = await procs.start(join);
    const lateId = await waitFor("the new cellapp to register", () => cellappOf(admin, late.pid), 5000);
    for (const s of [1, id]) {
      await waitFor(`space ${s} to get a cell on the new cellapp`, async () => {
        const v = await space(admin, s);
        return v.cells.length === 1 && v.cells[0].cellapp === lateId &&
          (await api(admin, `/api/cellapps/${lateId}/cells/${s}`)).status === 200;
      }, 5000);
    }
    assert.deepEqual((await spaces(admin)).map((s) => [s.id, s.isDefault]), [[1, true], [id, false]]);
  },
);
