/** `deno task navmesh`: an OBJ built into a .navmesh file that loads and finds paths; a bad file is one line naming it. */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { NavMeshes } from "../../cell/nav/mod.ts";

const TOOL = fileURLToPath(new URL("../../tools/navmesh.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/nav/${name}`, import.meta.url));

async function tool(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command(Deno.execPath(), { args: ["run", "-A", "--config", CONFIG, TOOL, ...args] })
    .output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: r.code, out: text(r.stdout), err: text(r.stderr) };
}

Deno.test("deno task navmesh writes a navmesh that a space loads without building", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const out = `${dir}/wall.navmesh`;
    const r = await tool(fixture("wall.obj"), out);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /-> .*wall\.navmesh \(\d+ bytes/);
    const mesh = await new NavMeshes().load(out);
    const found = mesh.findPath({ x: 60, y: 0, z: 30 }, { x: 140, y: 0, z: 30 });
    assert.ok("path" in found && found.path.some((p) => p.z > 70), JSON.stringify(found));
    const bad = await tool(fixture("not_a_mesh.obj"), out);
    assert.equal(bad.code, 1);
    assert.equal(bad.err.trim().split("\n").length, 1, bad.err);
    assert.match(bad.err, new RegExp(`navigation geometry ${fixture("not_a_mesh.obj")}: line 1`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
