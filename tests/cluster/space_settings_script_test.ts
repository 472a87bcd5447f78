/**
 * A cell script changes its space's settings over the wire: a real cellappmgr process, a cellapp in this process
 * (so that it runs this test's script), and a cellapp process holding the space's other cell. The change reaches the
 * cellappmgr's view and this cellapp's cell (whose ghost areas grow); a refusal rejects the script's promise.
 */
import assert from "node:assert/strict";
import { parseCommand } from "../../core/config/mod.ts";
import { CellScript } from "../../core/script.ts";
import type { SpaceView } from "../../core/views.ts";
import { CellApp } from "../../cell/cellapp.ts";
import { cellsOfSpace } from "../../cell/cell_table.ts";
import { registry } from "../../entities/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** The NPC's script in the in-process cellapp: the test calls its entity's built-ins directly. */
class Quiet extends CellScript {}

Deno.test("a script's setSpaceSettings goes through the cellappmgr to every cellapp of its space", opts, async () => {
  await using procs = new Procs();
  const radii = ["--aoi-radius=40", "--ghost-radius=60"];
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=0", ...radii]);
  const admin = mgr.ready.admin!;
  const parsed = parseCommand(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, ...radii], {});
  if (parsed.help) throw new Error("unreachable");
  const local = new CellApp(parsed.config, memoryLogger(), { registry, scripts: { NPC: Quiet } });
  try {
    await waitFor("the in-process cellapp and the default space", async () => {
      const p = ((await api(admin, "/api/cluster")).body as { processes: { role: string }[] }).processes;
      return p.some((x) => x.role === "cellapp") && (await api(admin, "/api/spaces/1")).status === 200;
    });
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, ...radii]);
    await waitFor("two cellapps", async () => {
      const p = ((await api(admin, "/api/cluster")).body as { processes: { role: string }[] }).processes;
      return p.filter((x) => x.role === "cellapp").length === 2;
    });
    const made = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 1000, 200], cells: 2 }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = (made.body as { id: number }).id;
    const cell = await waitFor("a cell of the space here", () => cellsOfSpace(local.cells, id)[0]);
    const npc = cell.createEntity("NPC", { x: (cell.rect.minX + cell.rect.maxX) / 2, y: 0, z: 100 });
    assert.deepEqual(npc.spaceSettings, { aoiRadius: 40, ghostRadius: 60 });

    assert.deepEqual(await npc.setSpaceSettings({ aoiRadius: 100, ghostRadius: 150 }), {
      aoiRadius: 100,
      ghostRadius: 150,
    });
    const view = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
    assert.deepEqual(view.settings, { aoiRadius: 100, ghostRadius: 150 });
    await waitFor("this cellapp's cell to have them", () => npc.spaceSettings.ghostRadius === 150);
    assert.equal(npc.spaceSettings.aoiRadius, 100);
    const other = cell.ghostAreas[0];
    assert.ok(other, "the space's other cell is a neighbour");
    // Split at x = 500: its area reaches 150 m past the split (its sides on the space's edge are open).
    const past = Number.isFinite(other.area.maxX) ? other.area.maxX - 500 : 500 - other.area.minX;
    assert.equal(past, 150, "its ghost area is grown by 150 m");

    // The cell refuses what breaks the rule before sending anything; the cellappmgr refuses what it must (here the
    // space is shutting down), and the script's promise says why.
    await assert.rejects(npc.setSpaceSettings({ ghostRadius: 90 }), /ghostRadius 90 m is less than aoiRadius 100 m/);
    const gone = await api(admin, `/api/spaces/${id}`, {
      method: "DELETE",
      headers: { "content-type": "application/json" },
    });
    assert.equal(gone.status, 202);
    await assert.rejects(
      npc.setSpaceSettings({ aoiRadius: 20 }),
      (e: Error) => e.message.startsWith(`setSpaceSettings by NPC ${npc.id}: `) && e.message.includes(`space ${id}`),
    );
  } finally {
    await local.close("test over");
  }
});
