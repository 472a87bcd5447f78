/**
 * `deno task compile`: builds a standalone binary, dist/seamless, with
 * `deno compile` (the entity folders included). Building downloads Deno's
 * compile runtime (denort) from dl.deno.land; where that host cannot be
 * reached this task fails and says so, rather than producing anything else.
 */
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));
const output = `${root}dist/seamless${Deno.build.os === "windows" ? ".exe" : ""}`;
const args = [
  "compile",
  "-A",
  "--config",
  `${root}deno.json`,
  "--include",
  `${root}entities`,
  // A worker's module is not found by following imports: the navmesh builder (cell/nav/nav_meshes.ts) is one.
  "--include",
  `${root}cell/nav/build_worker.ts`,
  "--output",
  output,
  `${root}main.ts`,
  ...Deno.args,
];
const out = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "piped" }).output();
const err = new TextDecoder().decode(out.stderr);
await Deno.stderr.write(out.stderr);
if (!out.success) {
  if (/dl\.deno\.land|denort|error sending request|dns error/i.test(err)) {
    console.error(
      "\ncompile: deno compile needs Deno's compile runtime (denort), downloaded from dl.deno.land, " +
        "and this machine cannot reach it. Build on a machine that can, or set DENORT_BIN to a denort " +
        `binary of Deno ${Deno.version.deno}. No binary was written.`,
    );
  }
  Deno.exit(out.code || 1);
}
console.log(`compile: wrote ${output}; run it as: ${output} --help`);
