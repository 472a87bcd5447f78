import assert from "node:assert/strict";
import type { CellEntityView, ProcessView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../helpers/procs.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const RESTORE_TIMEOUT_MS = 2000;

Deno.test(
  "SIGKILL of a cellapp: the surviving cell keeps the ghosts of its reals, frozen, until --restore-timeout, then none",
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

    const cluster = ((await api(admin, "/api/cluster")).body as { processes: ProcessView[] }).processes;
    const doomedPid = cluster.find((p) => p.id === doomed)!.pid;
    apps.find((p) => p.pid === doomedPid)!.kill("SIGKILL");
    const t0 = performance.now();
    await waitFor(
      "the surviving cell to cover the space",
      async () => {
        const s = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
        return s.cells.length === 1 && s.cells[0].cellapp === survivor;
      },
      3000,
      50,
    );
    const right = (await list(survivor)).filter((e) => !e.real).map((e) => e.id).sort((a, b) => a - b);
    assert.ok(performance.now() - t0 < RESTORE_TIMEOUT_MS, "(checked within the timeout)");
    assert.deepEqual(right, doomedReals, "right after the death the ghosts of its reals are still there, frozen");

    await waitFor("the frozen ghosts to go", async () => (await list(survivor)).every((e) => e.real), 8000, 100);
    const took = performance.now() - t0;
    // Dropped at the first ghost check (once a second) after the timeout.
    assert.ok(took >= RESTORE_TIMEOUT_MS - 200, `dropped after ${Math.round(took)} ms, not before the timeout`);
    assert.ok(took < RESTORE_TIMEOUT_MS + 2500, `no ghost lingers: gone ${Math.round(took)} ms after the death`);
  },
);
