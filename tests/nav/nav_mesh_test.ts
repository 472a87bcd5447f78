/**
 * Navigation meshes (cell/nav/): built from the test OBJ (a floor with a wall across it and a block no walker can
 * climb), from a height field and from an exported navmesh; paths go around the wall, the unreachable is said, and a
 * file that is not a mesh gives one error naming it.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { NavGeometryError, NavMeshes, type SpaceNavMesh } from "../../cell/nav/mod.ts";
import type { Vec3 } from "../../core/script.ts";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/nav/${name}`, import.meta.url));
const WALL_OBJ = fixture("wall.obj");
/** One build of the wall mesh for the tests that only query it. */
const shared = new NavMeshes();
/** The wall's footprint in the fixture: x 78..82, z 0..70. */
const WALL = { minX: 78, maxX: 82, minZ: 0, maxZ: 70 };

/** Whether segment a-b passes through the rect (on X/Z), by sampling every 5 cm. */
function crosses(a: Vec3, b: Vec3, r: typeof WALL): boolean {
  const n = Math.ceil(Math.hypot(b.x - a.x, b.z - a.z) / 0.05) + 1;
  for (let i = 0; i <= n; i++) {
    const x = a.x + (b.x - a.x) * i / n, z = a.z + (b.z - a.z) * i / n;
    if (x > r.minX && x < r.maxX && z > r.minZ && z < r.maxZ) return true;
  }
  return false;
}

function path(mesh: SpaceNavMesh, from: Vec3, to: Vec3): Vec3[] {
  const r = mesh.findPath(from, to);
  assert.ok("path" in r, `a path from ${JSON.stringify(from)} to ${JSON.stringify(to)}: ${JSON.stringify(r)}`);
  return r.path;
}

Deno.test("a path goes around the wall, never through it, and ends at the target", async () => {
  const mesh = await shared.load(WALL_OBJ);
  const p = path(mesh, { x: 60, y: 0, z: 30 }, { x: 140, y: 0, z: 30 });
  assert.ok(p.length >= 3, `corners: ${JSON.stringify(p)}`);
  for (let i = 1; i < p.length; i++) assert.ok(!crosses(p[i - 1], p[i], WALL), `leg ${i} crosses the wall`);
  assert.ok(p.some((c) => c.z > WALL.maxZ), "it goes round the wall's open end");
  const end = p[p.length - 1];
  assert.ok(Math.hypot(end.x - 140, end.z - 30) < 0.1, `ends at the target: ${JSON.stringify(end)}`);
  // Beyond the wall's end the way is straight.
  assert.equal(path(mesh, { x: 60, y: 0, z: 90 }, { x: 140, y: 0, z: 90 }).length, 2);
});

Deno.test("a raycast stops at the wall, and passes where nothing is in the way", async () => {
  const mesh = await shared.load(WALL_OBJ);
  const hit = mesh.raycast({ x: 60, y: 0, z: 30 }, { x: 140, y: 0, z: 30 });
  assert.ok(hit && hit.x > 76 && hit.x < WALL.minX && Math.abs(hit.z - 30) < 0.01, JSON.stringify(hit));
  assert.equal(mesh.raycast({ x: 60, y: 0, z: 90 }, { x: 140, y: 0, z: 90 }), null);
  assert.throws(() => mesh.raycast({ x: 300, y: 0, z: 30 }, { x: 0, y: 0, z: 0 }), /not on the navigation mesh/);
});

Deno.test("an unreachable target has no path, and the reason says why", async () => {
  const mesh = await shared.load(WALL_OBJ);
  const from = { x: 60, y: 0, z: 30 };
  const onBlock = mesh.findPath(from, { x: 155, y: 3, z: 85 });
  assert.ok("why" in onBlock && /not connected/.test(onBlock.why), JSON.stringify(onBlock));
  const off = mesh.findPath(from, { x: 250, y: 0, z: 30 });
  assert.ok("why" in off && /not on the navigation mesh/.test(off.why) && off.why.includes(WALL_OBJ));
});

Deno.test("a mesh is built once per geometry file and shared", async () => {
  const meshes = new NavMeshes();
  const [a, b] = await Promise.all([meshes.load(WALL_OBJ), meshes.load(WALL_OBJ)]);
  assert.equal(a, b);
  assert.equal(meshes.get(WALL_OBJ), a);
  assert.equal(meshes.size, 1);
  assert.equal(meshes.get(fixture("other.obj")), undefined, "one never asked for is not there");
});

Deno.test("a navmesh exported and loaded back finds the same path", async () => {
  const mesh = await shared.load(WALL_OBJ);
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/wall.navmesh`;
    await Deno.writeFile(file, mesh.export());
    const loaded = await new NavMeshes().load(file);
    const from = { x: 60, y: 0, z: 30 }, to = { x: 140, y: 0, z: 30 };
    assert.deepEqual(path(loaded, from, to), path(mesh, from, to));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a height field's path follows its heights", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // 11 x 11 points 10 m apart, rising 1 m per 10 m along x: a gentle slope.
    const heights = Array.from({ length: 121 }, (_, i) => i % 11);
    const file = `${dir}/slope.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({ heightField: { origin: [0, 0], cellSize: 10, columns: 11, rows: 11, heights } }),
    );
    const mesh = await new NavMeshes().load(file);
    const p = path(mesh, { x: 10, y: 1, z: 50 }, { x: 90, y: 9, z: 50 });
    const end = p[p.length - 1];
    assert.ok(Math.abs(end.y - 9) < 0.5, `the end is up the slope: ${JSON.stringify(end)}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file that is not a mesh gives one error naming the file, and is not read again", async () => {
  const meshes = new NavMeshes();
  const bad = fixture("not_a_mesh.obj");
  const first = await meshes.load(bad).then(() => null, (e) => e);
  assert.ok(first instanceof NavGeometryError, String(first));
  assert.match(first.message, new RegExp(`^navigation geometry ${bad}: line 1 .*not an OBJ statement`));
  assert.equal(await meshes.load(bad).then(() => null, (e) => e), first, "the same error, not a second read");
  assert.throws(() => meshes.get(bad), (e) => e === first);
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/junk.navmesh`, "not a navmesh at all, just text");
    await assert.rejects(
      meshes.load(`${dir}/junk.navmesh`),
      new RegExp(`${dir}/junk.navmesh: not an exported navmesh`),
    );
    await Deno.writeTextFile(`${dir}/flat.json`, `{"heightField": {"origin": [0, 0], "cellSize": 1}}`);
    await assert.rejects(meshes.load(`${dir}/flat.json`), new RegExp(`${dir}/flat.json: heightField.columns`));
    await assert.rejects(meshes.load(`${dir}/nothing.obj`), new RegExp(`${dir}/nothing.obj: cannot read it`));
    await assert.rejects(meshes.load(`${dir}/mesh.stl`), /unknown kind ".stl"/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a released mesh is freed, and made again when asked for", async () => {
  const meshes = new NavMeshes();
  const a = await meshes.load(WALL_OBJ);
  meshes.release(WALL_OBJ);
  assert.equal(meshes.size, 0);
  assert.equal(meshes.has(WALL_OBJ), false);
  const b = await meshes.load(WALL_OBJ);
  assert.notEqual(a, b);
  assert.ok("path" in b.findPath({ x: 60, y: 0, z: 30 }, { x: 140, y: 0, z: 30 }));
});
