/**
 * Load balancing with real processes: a crowd in one cell pulls the partition
 * into it (also making cells narrower than the ghost radius, whose reals are
 * then ghosted into non-adjacent cells), a retired cellapp is drained (its
 * cells shrink to nothing and leave, a space it ran alone moves to another
 * cellapp), and an overloaded space gains a cell that it gives back once idle,
 * with every entity real exactly once throughout.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { CellAppView, CellEntityView, SpaceView } from "../../core/views.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const JSON_HEADERS = { "content-type": "application/json" };
/** Small radii, so that the ghosts of a 400 m space stay few. */
const RADII = ["--aoi-radius=20", "--ghost-radius=35"];
/** The narrowest the cellappmgr makes a cell (its default --min-cell-width). */
const MIN_WIDTH = 10;
/** A test game whose Walkers walk to a point and stay, and whose Marchers keep walking, then stop. */
const GAME = `--game=${fileURLToPath(new URL("../../testing/games/walkers.ts", import.meta.url))}`;

async function cluster(
  procs: Procs,
  cellapps: number,
  extra: string[] = [],
  mgrExtra: string[] = [],
): Promise<{ admin: string; cellapps: Proc[] }> {
  const mgr = await procs.start([
    "--role=mgr",
    "--port=0",
    "--admin-port=0",
    "--balance-period=500",
    ...extra,
    ...mgrExtra,
  ]);
  const admin = mgr.ready.admin!;
  const flags = ["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`, ...RADII, ...extra];
  const apps = await Promise.all(Array.from({ length: cellapps }, () => procs.start(flags)));
  await waitFor(`${cellapps} cellapps`, async () => {
    const p = ((await api(admin, "/api/cluster")).body as { processes: { role: string }[] }).processes;
    return p.filter((x) => x.role === "cellapp").length === cellapps;
  });
  return { admin, cellapps: apps };
}

async function post(admin: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  return await api(admin, path, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(body) });
}

/** Every real entity of a space over all cellapps: how many reals were listed, by id, and the ids listed twice. */
async function reals(
  admin: string,
  spaceId: number,
  cellapps: number[],
): Promise<{ count: number; ids: Set<number>; twice: Set<number> }> {
  const lists = await Promise.all(cellapps.map(async (a) => {
    const r = await api(admin, `/api/cellapps/${a}/cells/${spaceId}`);
    return r.status === 200 ? (r.body as { entities: CellEntityView[] }).entities : [];
  }));
  const all = lists.flat().filter((e) => e.real);
  const ids = new Set<number>();
  const twice = new Set<number>();
  for (const e of all) (ids.has(e.id) ? twice : ids).add(e.id);
  return { count: all.length, ids, twice };
}

async function space(admin: string, id: number): Promise<SpaceView> {
  return (await api(admin, `/api/spaces/${id}`)).body as SpaceView;
}

Deno.test("a crowd in one cell pulls the partition into it, and it settles there", opts, async () => {
  await using procs = new Procs();
  const { admin, cellapps } = await cluster(procs, 2);
  const made = await post(admin, "/api/spaces", { bounds: [0, 0, 400, 100], cells: 2 });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = (made.body as { id: number }).id;
  const before = await space(admin, id);
  assert.deepEqual(before.balance.partitions.map((p) => [p.axis, p.at]), [["x", 200]]);
  // The crowd: 600 NPCs wandering within 40 m of x = 100 (cell 1); a few around x = 300 (cell 2).
  const crowd = await post(admin, `/api/spaces/${id}/entities`, {
    entities: [
      { type: "NPC", count: 600, position: [100, 0, 50], props: { wanderRadius: 40 } },
      { type: "NPC", count: 30, position: [300, 0, 50], props: { wanderRadius: 40 } },
    ],
  });
  assert.equal(crowd.status, 201, JSON.stringify(crowd.body));
  const total = 630;

  // The partition moves into the crowd (from 200 to within its 60..140 span) and the reals spread over both cells.
  const moved = await waitFor(
    "the partition to move into the crowd",
    async () => {
      const s = await space(admin, id);
      const at = s.balance.partitions[0]?.at ?? 200;
      const [a, b] = s.cells.map((c) => c.reals);
      return at < 150 && Math.min(a, b) > total * 0.2 ? s : null;
    },
    60_000,
    250,
  );
  assert.ok(moved.cells.every((c) => c.rect[2] - c.rect[0] >= MIN_WIDTH), "no cell narrower than the minimum");

  // It settles: over the next 4 s, the partition stays within the crowd and moves little.
  const t0 = Date.now();
  await new Promise((r) => setTimeout(r, 4000));
  const after = await space(admin, id);
  const recent = after.balance.history.filter((h) => h.t >= t0).map((h) => h.partitions[0].at);
  assert.ok(recent.length >= 5, `history samples over 4 s: ${recent.length}`);
  assert.ok(recent.every((at) => at > 50 && at < 160), `partition positions: ${recent.join(", ")}`);
  assert.ok(Math.max(...recent) - Math.min(...recent) < 60, `partition positions: ${recent.join(", ")}`);

  // Nothing lost or doubled by the hand-overs the moves caused.
  const apps = [...new Set(after.cells.map((c) => c.cellapp))];
  await waitFor(
    "every entity real exactly once",
    async () => {
      const r = await reals(admin, id, apps);
      return r.count === total && r.ids.size === total;
    },
    10_000,
    200,
  );
  const trouble = cellapps.flatMap((p) => p.stderr.filter((l) => /stays real|lost|script error/.test(l)));
  assert.deepEqual(trouble, []);
});

Deno.test(
  "a retired cellapp is drained: its cells shrink to nothing and leave, a space it ran alone moves, nothing is lost",
  opts,
  async () => {
    await using procs = new Procs();
    const { admin, cellapps } = await cluster(procs, 2);
    const two = await post(admin, "/api/spaces", {
      bounds: [0, 0, 400, 100],
      cells: 2,
      entities: [{ type: "NPC", count: 120, props: { wanderRadius: 20 } }],
    });
    assert.equal(two.status, 201, JSON.stringify(two.body));
    const twoId = (two.body as { id: number }).id;
    const one = await post(admin, "/api/spaces", {
      bounds: [0, 0, 200, 200],
      cells: 1,
      entities: [{ type: "NPC", count: 40, props: { wanderRadius: 20 } }],
    });
    assert.equal(one.status, 201, JSON.stringify(one.body));
    const oneId = (one.body as { id: number }).id;
    const victim = (await space(admin, oneId)).cells[0].cellapp;
    const other = (await space(admin, twoId)).cells.map((c) => c.cellapp).find((a) => a !== victim)!;
    assert.ok(other !== undefined, "the 2-cell space runs on both cellapps");

    const bad = await post(admin, "/api/cellapps/999/retire", {});
    assert.equal(bad.status, 404);
    // It runs a cell of each space, and the default space's too when it was the first cellapp.
    const held = ((await api(admin, `/api/cellapps/${victim}`)).body as CellAppView).cells;
    assert.ok(held.length >= 2, JSON.stringify(held));
    const r = await post(admin, `/api/cellapps/${victim}/retire`, {});
    assert.equal(r.status, 202, JSON.stringify(r.body));
    assert.deepEqual(r.body, { id: victim, retiring: true, cells: held.length });
    // The other cellapp may not be retired as well: the cells would have nowhere to go.
    const last = await post(admin, `/api/cellapps/${other}/retire`, {});
    assert.equal(last.status, 409, JSON.stringify(last.body));

    // While it drains, every entity stays real exactly once. Two processes are not listed at one instant: a hand-over
    // between the two reads may show an entity on both (the old real fenced, the new one live) or on neither, for a
    // moment. Listed twice in two polls in a row is a double.
    const problems: string[] = [];
    const twiceBefore = new Map<number, Set<number>>();
    const drained = await waitFor(
      "the retired cellapp to run no cell",
      async () => {
        for (const sid of [twoId, oneId]) {
          const got = await reals(admin, sid, [victim, other]);
          const again = [...got.twice].filter((id) => twiceBefore.get(sid)?.has(id));
          if (again.length > 0) problems.push(`space ${sid}: entities ${again.join(", ")} real twice in two polls`);
          twiceBefore.set(sid, got.twice);
        }
        const v = (await api(admin, `/api/cellapps/${victim}`)).body as CellAppView;
        return v.cells.length === 0 ? v : null;
      },
      60_000,
      300,
    );
    assert.equal(drained.retiring, true);
    for (const sid of new Set([twoId, oneId, ...held.map((c) => c.spaceId)])) {
      const s = await space(admin, sid);
      assert.deepEqual(s.cells.map((c) => c.cellapp), [other], `space ${sid} runs on cellapp ${other} alone`);
    }
    await waitFor(
      "every entity real exactly once on the cellapp that stays",
      async () => {
        const a = await reals(admin, twoId, [victim, other]);
        const b = await reals(admin, oneId, [victim, other]);
        return a.count === 120 && a.ids.size === 120 && b.count === 40 && b.ids.size === 40;
      },
      15_000,
      200,
    );
    assert.deepEqual(problems, []);

    // Now it can be stopped with nothing lost.
    const proc = cellapps.find((p) => p.pid === drained.pid);
    assert.ok(proc, `cellapp ${victim} is pid ${drained.pid}, one of ours`);
    proc.kill("SIGTERM");
    await waitFor(
      "the retired cellapp to leave the cluster",
      async () => {
        const p = ((await api(admin, "/api/cluster")).body as { processes: { id: number }[] }).processes;
        return !p.some((x) => x.id === victim);
      },
      15_000,
      200,
    );
    const a = await reals(admin, twoId, [other]);
    const b = await reals(admin, oneId, [other]);
    assert.equal(a.ids.size + b.ids.size, 160);
  },
);

Deno.test("a crowd walks from one cell into the other, and the partition follows it there", opts, async () => {
  await using procs = new Procs();
  const { admin } = await cluster(procs, 2, [GAME]);
  const made = await post(admin, "/api/spaces", { bounds: [0, 0, 400, 100], cells: 2 });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = (made.body as { id: number }).id;
  // 400 walkers appear around x = 330 (the right cell) and walk at 12 m/s to around x = 80 (the left cell).
  const walk = await post(admin, `/api/spaces/${id}/entities`, {
    entities: [{
      type: "Walker",
      count: 400,
      position: [330, 0, 50],
      props: { toX: 80, toZ: 50, spread: 20, speed: 12 },
    }],
  });
  assert.equal(walk.status, 201, JSON.stringify(walk.body));
  const at = async () => (await space(admin, id)).balance.partitions[0].at;
  // Where the crowd starts, the partition goes right, into it; where it ends, the partition comes back left after it.
  await waitFor(
    "the partition to move right, after the crowd where it starts",
    async () => (await at()) > 230,
    20_000,
    100,
  );
  const left = await waitFor(
    "the partition to follow the crowd into the left cell",
    async () => {
      const s = await space(admin, id);
      const p = s.balance.partitions[0].at;
      const [a, b] = s.cells.map((c) => c.reals);
      return p < 150 && Math.min(a, b) > 400 * 0.2 ? s : null;
    },
    60_000,
    250,
  );
  assert.ok(left.cells.every((c) => c.rect[2] - c.rect[0] >= MIN_WIDTH), "no cell narrower than the minimum");
  const ids = await waitFor(
    "every walker real exactly once",
    async () => {
      const r = await reals(admin, id, [...new Set(left.cells.map((c) => c.cellapp))]);
      return r.count === 400 && r.ids.size === 400 ? r : null;
    },
    10_000,
    200,
  );
  assert.equal(ids.twice.size, 0);
});

Deno.test(
  "cells narrower than the ghost radius: the crowd's cell shrinks, and reals are ghosted into the non-adjacent cell",
  opts,
  async () => {
    await using procs = new Procs();
    const { admin } = await cluster(procs, 3);
    // Three cells in a row (x < 200, 200..400, x >= 400); AoI 100 m and ghosts 115 m deep.
    const made = await post(admin, "/api/spaces", {
      bounds: [0, 0, 600, 100],
      cells: 3,
      aoiRadius: 100,
      ghostRadius: 115,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = (made.body as { id: number }).id;
    const crowd = await post(admin, `/api/spaces/${id}/entities`, {
      entities: [
        { type: "NPC", count: 600, position: [300, 0, 50], props: { wanderRadius: 30 } },
        { type: "NPC", count: 20, position: [100, 0, 50], props: { wanderRadius: 30 } },
        { type: "NPC", count: 20, position: [500, 0, 50], props: { wanderRadius: 30 } },
      ],
    });
    assert.equal(crowd.status, 201, JSON.stringify(crowd.body));
    const total = 640;
    // Both partitions close in on the crowd: the middle cell ends narrower than the ghost radius.
    const narrow = await waitFor(
      "the middle cell to become narrower than the ghost radius, the crowd spread over the cells",
      async () => {
        const s = await space(admin, id);
        const mid = s.cells.find((c) => c.id === 2)!;
        const width = mid.rect[2] - mid.rect[0];
        return width < 115 && s.cells.every((c) => c.reals > 100) ? s : null;
      },
      60_000,
      250,
    );
    assert.ok(narrow.cells.every((c) => c.rect[2] - c.rect[0] >= MIN_WIDTH), JSON.stringify(narrow.cells));
    const [c1, , c3] = [1, 2, 3].map((cid) => narrow.cells.find((c) => c.id === cid)!);
    // Reals of cell 3 well within the ghost radius of cell 1 (NPCs move 1-2 m/s and ghosts are checked once a
    // second: 15 m of margin) have a ghost in cell 1, which does not touch cell 3.
    assert.ok(c1.rect[2] < c3.rect[0], "cells 1 and 3 do not touch");
    await waitFor(
      "every real of cell 3 within the ghost radius of cell 1 to have a ghost there",
      async () => {
        const [one, three] = await Promise.all([c1, c3].map(async (c) => {
          const r = await api(admin, `/api/cellapps/${c.cellapp}/cells/${id}`);
          return (r.body as { entities: CellEntityView[] }).entities;
        }));
        const ghostsIn1 = new Set(one.filter((e) => !e.real).map((e) => e.id));
        const near = three.filter((e) => e.real && e.position[0] < c1.rect[2] + 100);
        const missing = near.filter((e) => !ghostsIn1.has(e.id));
        return near.length >= 5 && missing.length === 0;
      },
      15_000,
      500,
    );
    const r = await waitFor(
      "every entity real exactly once",
      async () => {
        const got = await reals(admin, id, narrow.cells.map((c) => c.cellapp));
        return got.count === total && got.ids.size === total ? got : null;
      },
      10_000,
      200,
    );
    assert.equal(r.twice.size, 0);
  },
);

Deno.test(
  "an overloaded space gains a cell, and gives it back once idle, with no entity lost or doubled",
  opts,
  async () => {
    await using procs = new Procs();
    // Thresholds for this machine's loads: 1,000 marchers cost a few % of a core, standing still next to nothing.
    const { admin, cellapps } = await cluster(procs, 3, [GAME], [
      "--busy-load=0.05",
      "--idle-load=0.015",
    ]);
    const made = await post(admin, "/api/spaces", { bounds: [0, 0, 400, 100], cells: 2 });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = (made.body as { id: number }).id;
    const total = 1000;
    // They walk to and fro for 12 s, then stand still.
    const spawned = await post(admin, `/api/spaces/${id}/entities`, {
      entities: [{
        type: "Marcher",
        count: total,
        position: [200, 0, 50],
        props: { toX: 200, toZ: 50, spread: 180, speed: 12, stopAfter: 12 },
      }],
    });
    assert.equal(spawned.status, 201, JSON.stringify(spawned.body));
    const listed = ((await api(admin, "/api/cluster")).body as { processes: { id: number; role: string }[] }).processes;
    const apps = listed.filter((x) => x.role === "cellapp").map((x) => x.id);
    // Every poll: an entity listed twice in two polls in a row is a double (one hand-over may show it on both once).
    const problems: string[] = [];
    let twiceBefore = new Set<number>();
    const watch = async (): Promise<SpaceView> => {
      const got = await reals(admin, id, apps);
      const again = [...got.twice].filter((e) => twiceBefore.has(e));
      if (again.length > 0) problems.push(`entities ${again.join(", ")} real twice in two polls`);
      twiceBefore = got.twice;
      const s = await space(admin, id);
      return s;
    };
    const grown = await waitFor(
      "a third cell to be added and take reals",
      async () => {
        const s = await watch();
        return s.cells.length === 3 && s.cells.every((c) => c.reals > 0) ? s : null;
      },
      20_000,
      300,
    );
    const added = grown.cells.find((c) => c.id === 3)!;
    assert.ok(added, JSON.stringify(grown.cells));
    assert.equal(new Set(grown.cells.map((c) => c.cellapp)).size, 3, "one cell per cellapp");
    // On a timeout, the loads the cellappmgr last saw say why: what the idle cells still weighed against --idle-load.
    let last: SpaceView | null = null;
    const shrunk = await waitFor(
      "the idle space to retire a cell",
      async () => {
        const s = last = await watch();
        return s.cells.length === 2 ? s : null;
      },
      30_000,
      300,
    ).catch((e) => {
      const loads = last?.cells.map((c) => `cell ${c.id}: load ${c.load}, reals ${c.reals}`).join("; ");
      throw new Error(`${(e as Error).message}; last seen: ${loads}`, { cause: e });
    });
    const r = await waitFor(
      "every entity real exactly once",
      async () => {
        const got = await reals(admin, id, apps);
        return got.count === total && got.ids.size === total ? got : null;
      },
      10_000,
      200,
    );
    assert.equal(r.twice.size, 0);
    assert.equal(shrunk.cells.length, 2);
    // The cells report their reals once a second: those handed over as the cell retired show in the next reports,
    // which a machine busy with other work can delay by seconds.
    await waitFor(
      "the two cells to report every real",
      async () => (await space(admin, id)).cells.reduce((n, c) => n + c.reals, 0) === total,
      15_000,
      200,
    );
    assert.deepEqual(problems, []);
    const trouble = cellapps.flatMap((p) => p.stderr.filter((l) => /stays real|lost|script error/.test(l)));
    assert.deepEqual(trouble, []);
  },
);
