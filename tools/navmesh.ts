/**
 * `deno task navmesh IN OUT.navmesh`: builds the navigation mesh of geometry file IN (an OBJ mesh or a height field,
 * docs/game.md "Navigation") and writes it exported, so that a space naming OUT.navmesh loads it without building.
 * Prints what it wrote; a file that cannot be used exits 1 with one line naming it.
 */
import { NavMeshes } from "../cell/nav/mod.ts";
import { errorText } from "../core/errors.ts";

if (import.meta.main) {
  const [input, output] = Deno.args;
  if (!input || !output?.endsWith(".navmesh")) {
    console.error("usage: deno task navmesh IN.obj|IN.json OUT.navmesh");
    Deno.exit(2);
  }
  const meshes = new NavMeshes();
  try {
    const started = performance.now();
    const data = (await meshes.load(input)).export();
    await Deno.writeFile(output, data);
    console.log(
      `navmesh: ${input} -> ${output} (${data.length} bytes, built in ${Math.round(performance.now() - started)} ms)`,
    );
  } catch (e) {
    console.error(`navmesh: ${errorText(e)}`);
    Deno.exit(1);
  } finally {
    meshes.clear();
  }
}
