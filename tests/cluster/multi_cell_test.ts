import assert from "node:assert/strict";
import type { CellEntityView, SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const COUNT = 80;

Deno.test(
  "a 4-cell space over 2 cellapps: 2 cells each; NPCs cross between cells of one cellapp and of two, none lost or doubled",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    const admin = mgr.ready.admin!;
    const flags = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, "--aoi-radius=30", "--ghost-radius=50"];
    const cellapps = await Promise.all([procs.start(flags), procs.start(flags)]);
    await waitFor("two cellapps", async () => {
      const p = ((await api(admin, "/api/cluster")).body as { processes: { role: string }[] }).processes;
      return p.filter((x) => x.role === "cellapp").length === 2;
    });
    const made = await api(admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bounds: [0, 0, 100, 100],
        cells: 4,
        entities: [{ type: "NPC", count: COUNT, props: { wanderRadius: 140 } }],
      }),
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = (made.body as { id: number }).id;
    const space = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
    assert.deepEqual(space.cells.map((c) => c.id), [1, 2, 3, 4]);
    const apps = [...new Set(space.cells.map((c) => c.cellapp))];
    assert.equal(apps.length, 2, "over both cellapps");
    for (const a of apps) assert.equal(space.cells.filter((c) => c.cellapp === a).length, 2, "2 cells each");
    const appOf = new Map(space.cells.map((c) => [c.id, c.cellapp]));

    // Where each entity is real: its cell (and so its cellapp); `count` is how many copies are real.
    const snapshot = async () => {
      const lists = await Promise.all(
        apps.map(async (a) =>
          ((await api(admin, `/api/cellapps/${a}/cells/${id}`)).body as { entities: CellEntityView[] }).entities
        ),
      );
      const reals = lists.flat().filter((e) => e.real);
      return { count: reals.length, where: new Map(reals.map((e) => [e.id, e.cell])) };
    };
    const first = await snapshot();
    assert.equal(first.where.size, COUNT);
    assert.ok([...first.where.values()].every((c) => appOf.has(c)), "each entity is in one of the space's cells");
    const seen = { sameApp: new Set<number>(), otherApp: new Set<number>() };
    let last = first.where;
    await waitFor(
      "NPCs to cross between cells of the same cellapp and of different cellapps",
      async () => {
        const now = await snapshot();
        for (const [e, cell] of now.where) {
          const before = last.get(e);
          if (before === undefined || before === cell) continue;
          (appOf.get(before) === appOf.get(cell) ? seen.sameApp : seen.otherApp).add(e);
        }
        last = now.where;
        return seen.sameApp.size >= 3 && seen.otherApp.size >= 3 ? true : null;
      },
      30_000,
      300,
    );
    // The cells of one cellapp hand entities to each other: their offload counters show it.
    await waitFor(
      "offloads counted in every cell",
      async () => {
        const s = (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
        return s.cells.every((c) => c.offloadsIn > 0 && c.offloadsOut > 0) &&
          s.cells.reduce((n, c) => n + c.reals, 0) === COUNT;
      },
      15_000,
      300,
    );
    // Doubles could only be transient (a snapshot of two processes straddling a hand-over); none persists.
    await waitFor(
      "a snapshot with every entity real exactly once",
      async () => {
        const now = await snapshot();
        return now.count === COUNT && now.where.size === COUNT;
      },
      10_000,
      100,
    );
    // Hand-overs and ghosts between cells went through without a failure or a lost update.
    const trouble = cellapps.flatMap((p) =>
      p.stderr.filter((l) => /not created|stays real|missing updates|lost|failed|script error/.test(l))
    );
    assert.deepEqual(trouble, []);
  },
);
