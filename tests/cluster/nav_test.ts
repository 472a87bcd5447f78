/**
 * Navigation with real processes (testing/games/navigators.ts; the space's geometry is tests/fixtures/nav/wall.obj, a
 * floor with a wall across it): a navigator walks around the wall into the cell of the other cellapp and arrives, an
 * unreachable target fails its controller with the reason, a geometry file that is not a mesh fails the space's
 * creation naming the file, and a navigator whose cellapp dies mid-walk is restored from its backup still walking.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { CellEntityView, EntityInspectView, SpaceView } from "../../core/views.ts";
import { startCluster } from "../helpers/players.ts";
import { api, type Procs, Procs as ProcGroup } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const GAME = `--game=${fileURLToPath(new URL("../../testing/games/navigators.ts", import.meta.url))}`;
const NOT_A_MESH = fileURLToPath(new URL("../fixtures/nav/not_a_mesh.obj", import.meta.url));
const JSON_HEADERS = { "content-type": "application/json" };
/** The wall's footprint in the fixture: x 78..82, z 0..70. */
const inWall = ([x, , z]: number[]) => x > 78 && x < 82 && z > 0 && z < 70;

async function post(admin: string, path: string, body: unknown): Promise<{ status: number; body: unknown }> {
  return await api(admin, path, { method: "POST", headers: JSON_HEADERS, body: JSON.stringify(body) });
}

/** A cluster of two cellapps running the navigators game, and a 200 × 100 m space of two cells, one on each. */
async function navSpace(
  procs: Procs,
): Promise<{ admin: string; spaceId: number; cluster: Awaited<ReturnType<typeof startCluster>> }> {
  const cluster = await startCluster(procs, {
    cellapps: 2,
    mgrFlags: [GAME],
    cellFlags: [GAME, "--aoi-radius=20", "--ghost-radius=35"],
  });
  const made = await post(cluster.admin, "/api/spaces", { bounds: [0, 0, 200, 100], cells: 2 });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const spaceId = (made.body as { id: number }).id;
  const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
  assert.deepEqual(space.balance.partitions.map((p) => [p.axis, p.at]), [["x", 100]]);
  assert.equal(new Set(space.cells.map((c) => c.cellapp)).size, 2, "one cell on each cellapp");
  return { admin: cluster.admin, spaceId, cluster };
}

/** Spawns one Navigator at `at` going to (toX, toZ); returns its id. */
async function spawnNavigator(
  admin: string,
  spaceId: number,
  at: [number, number, number],
  props: Record<string, number>,
): Promise<number> {
  const before = new Set((await navigators(admin, spaceId)).map((e) => e.id));
  const r = await post(admin, `/api/spaces/${spaceId}/entities`, {
    entities: [{ type: "Navigator", count: 1, position: at, props }],
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return await waitFor(
    "the navigator listed",
    async () => (await navigators(admin, spaceId)).find((e) => !before.has(e.id))?.id,
  );
}

async function navigators(admin: string, spaceId: number): Promise<CellEntityView[]> {
  const { processes } = (await api(admin, "/api/cluster")).body as { processes: { id: number; role: string }[] };
  const lists = await Promise.all(
    processes.filter((p) => p.role === "cellapp").map(async (p) => {
      const r = await api(admin, `/api/cellapps/${p.id}/cells/${spaceId}`);
      return r.status === 200 ? (r.body as { entities: CellEntityView[] }).entities : [];
    }),
  );
  return lists.flat().filter((e) => e.real && e.type === "Navigator");
}

async function inspect(
  admin: string,
  id: number,
): Promise<(EntityInspectView & { props: Record<string, unknown> }) | null> {
  const r = await api(admin, `/api/entities/${id}`);
  if (r.status !== 200) return null;
  const v = r.body as EntityInspectView;
  return { ...v, props: Object.fromEntries(v.properties.map((p) => [p.name, p.value])) };
}

/**
 * Waits until the admin API shows entity `id` at (x, z): the position it lists may be a ghost's, a moment behind the
 * real that said it arrived.
 */
async function atTarget(admin: string, id: number, x: number, z: number): Promise<void> {
  let last: number[] = [];
  await waitFor(`entity ${id} at (${x}, ${z})`, async () => {
    last = (await inspect(admin, id))?.position ?? [];
    return Math.hypot(last[0] - x, last[2] - z) < 0.1;
  }, 5000).catch((e) => {
    throw new Error(`${(e as Error).message}; last seen at ${last}`, { cause: e });
  });
}

Deno.test(
  "a navigator walks around the wall onto the other cellapp and arrives; the unreachable and a bad file fail",
  opts,
  async () => {
    await using procs = new ProcGroup();
    const { admin, spaceId } = await navSpace(procs);
    const id = await spawnNavigator(admin, spaceId, [60, 0, 30], { toX: 140, toZ: 30, speed: 20 });
    const start = (await inspect(admin, id))!;
    const seen: number[][] = [];
    const end = await waitFor(
      "the navigator to arrive",
      async () => {
        const v = await inspect(admin, id);
        if (v) seen.push(v.position);
        return v?.props.arrived === 1 ? v : null;
      },
      20_000,
      20,
    );
    assert.ok(seen.length >= 10, `sampled its walk ${seen.length} times`);
    assert.deepEqual(seen.filter(inWall), [], "never seen inside the wall");
    assert.ok(seen.some(([, , z]) => z > 70), "seen going round the wall's end");
    assert.equal(end.props.wallTicks, 0, "no tick inside the wall, by its own count");
    await atTarget(admin, id, 140, 30);
    assert.notEqual(end.cellapp, start.cellapp, "it arrived real on the other cellapp");

    const stuck = await spawnNavigator(admin, spaceId, [60, 0, 90], { toX: 155, toZ: 85, speed: 20 });
    const failed = await waitFor("the unreachable navigate to fail", async () => {
      const v = await inspect(admin, stuck);
      return v?.props.failure ? v : null;
    });
    assert.match(
      failed.props.failure as string,
      new RegExp(`^navigate by Navigator ${stuck}: no path to \\(155, 0, 85\\)`),
    );

    const bad = await post(admin, "/api/spaces", { bounds: [0, 0, 100, 100], geometry: NOT_A_MESH });
    assert.equal(bad.status, 503, JSON.stringify(bad.body));
    const message = (bad.body as { error: { message: string } }).error.message;
    assert.match(message, new RegExp(`navigation geometry ${NOT_A_MESH}: line 1 .*not an OBJ statement`));
    assert.equal(message.split(NOT_A_MESH).length, 2, `the file named once: ${message}`);
  },
);

Deno.test("a navigator whose cellapp dies mid-walk comes back from its backup walking, and arrives", opts, async () => {
  await using procs = new ProcGroup();
  const { admin, spaceId, cluster } = await navSpace(procs);
  // Round the wall's end and back down: about 30 m at 4 m/s.
  const id = await spawnNavigator(admin, spaceId, [70, 0, 60], { toX: 90, toZ: 60, speed: 4 });
  const doomed = (await inspect(admin, id))!.cellapp;
  const { processes } = (await api(admin, "/api/cluster")).body as { processes: { id: number; pid: number }[] };
  const pid = processes.find((p) => p.id === doomed)!.pid;
  // Two backup periods: its buddy holds a backup of it walking.
  await new Promise((r) => setTimeout(r, 2500));
  const before = (await inspect(admin, id))!;
  assert.equal(before.props.arrived, 0, "still walking when its cellapp dies");
  cluster.cellapps.find((p) => p.pid === pid)!.kill("SIGKILL");
  const end = await waitFor(
    "the restored navigator to arrive",
    async () => {
      const v = await inspect(admin, id);
      return v && v.cellapp !== doomed && v.props.arrived === 1 ? v : null;
    },
    30_000,
    100,
  );
  await atTarget(admin, id, 90, 60);
  assert.equal(end.props.wallTicks, 0);
});
