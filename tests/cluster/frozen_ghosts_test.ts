import assert from "node:assert/strict";
import type { CellEntityView, ProcessView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const RESTORE_TIMEOUT_MS = 2000;

Deno.test(
  "SIGKILL of a cellapp: the survivor keeps its reals' ghosts until they are restored there; none lost, none twice, no ghost lingers",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    const admin = mgr.ready.admin!;
    const flags = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, `--restore-timeout=${RESTORE_TIMEOUT_MS}`];
    const apps = await Promise.all([procs.start(flags), procs.start(flags)]);
    await waitFor("two cellapps", async () => {
      const p = ((await api(admin, "/api/cluster")).body as { processes: ProcessView[] }).processes;
      return p.filter((x) => x.role === "cellapp").length === 2;
    });
    // The ghost radius (AoI radius + 15) covers the whole space: every real has a ghost in the other cell.
    const made = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 400, 200], cells: 2, entities: [{ type: "NPC", count: 60 }] }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = (made.body as { id: number }).id;
    const space = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
    const [survivor, doomed] = space.cells.map((c) => c.cellapp);
    assert.notEqual(survivor, doomed);
    const list = async (cellapp: number) =>
      ((await api(admin, `/api/cellapps/${cellapp}/cells/${id}`)).body as { entities: CellEntityView[] }).entities;
    const doomedReals = await waitFor(
      "every real ghosted in the other cell",
      async () => {
        const [s, d] = [await list(survivor), await list(doomed)];
        const reals = d.filter((e) => e.real).map((e) => e.id).sort((a, b) => a - b);
        const ghosts = s.filter((e) => !e.real).map((e) => e.id).sort((a, b) => a - b);
        return reals.length > 0 && JSON.stringify(reals) === JSON.stringify(ghosts) ? reals : null;
      },
      10_000,
      200,
    );

    // Every real is backed up to the buddy once per backup period (1 s); entities younger than that have none yet.
    await new Promise((r) => setTimeout(r, 1500));
    const cluster = ((await api(admin, "/api/cluster")).body as { processes: ProcessView[] }).processes;
    const doomedPid = cluster.find((p) => p.id === doomed)!.pid;
    apps.find((p) => p.pid === doomedPid)!.kill("SIGKILL");
    await waitFor(
      "the surviving cell to cover the space",
      async () => {
        const s = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
        return s.cells.length === 1 && s.cells[0].cellapp === survivor;
      },
      3000,
      50,
    );
    // Each of the dead cellapp's reals is, at every look, a frozen ghost or its restored real here: never neither
    // (observers would see it leave), never both.
    let looks = 0;
    await waitFor(
      "every real of the dead cellapp restored here from its buddy's backup",
      async () => {
        const here = await list(survivor);
        const ids = new Set(here.map((e) => e.id));
        assert.equal(ids.size, here.length, "no id twice in the surviving cell");
        for (const r of doomedReals) {
          assert.ok(ids.has(r), `entity ${r} is there, as a ghost or restored (look ${looks})`);
        }
        looks++;
        return doomedReals.every((r) => here.find((e) => e.id === r)?.real);
      },
      8000,
      50,
    );
    // The restore timeout passes: nothing is dropped, since every real came back, and no ghost is left.
    await new Promise((r) => setTimeout(r, RESTORE_TIMEOUT_MS + 1200));
    const after = await list(survivor);
    assert.ok(after.every((e) => e.real), "no ghost lingers");
    assert.equal(after.filter((e) => doomedReals.includes(e.id)).length, doomedReals.length, "none lost");
  },
);
