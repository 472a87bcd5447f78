/**
 * `deno task browser [ENTRY] [--out=FILE]`: bundles a browser module into one ES module with `deno bundle` (esbuild,
 * from npm): by default the SDK (client/browser.ts) into dist/browser/seamless.js. `--example` builds the example
 * page instead (examples/browser/: app.ts bundled with the SDK and the sample game's definitions, beside its
 * index.html) into dist/browser/example/, or into `--out`'s folder.
 */
import { errorText } from "../core/errors.ts";
import { parseArgs } from "node:util";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/**
 * Bundles `entry` into the single ES module `out`; throws with deno bundle's output when it fails. An entry outside
 * this repository (a game's own page) is bundled with the configuration Deno finds from its folder: the game's
 * imports (`@seamless/server/client`, `@seamless/server/defs`) are there.
 */
export async function bundle(entry: string, out: string): Promise<void> {
  await Deno.mkdir(dirname(out), { recursive: true });
  const inside = !relative(ROOT, entry).startsWith("..");
  const p = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--quiet",
      "--platform=browser",
      "--format=esm",
      "--minify",
      ...(inside ? [`--config=${ROOT}deno.json`] : []),
      "-o",
      out,
      entry,
    ],
    cwd: dirname(entry),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (p.code !== 0) {
    const dec = new TextDecoder();
    throw new Error(`deno bundle ${entry} failed: ${dec.decode(p.stderr)}${dec.decode(p.stdout)}`);
  }
}

/** Builds the example page into `dir`: index.html and app.js. */
export async function buildExample(dir: string): Promise<void> {
  await bundle(join(ROOT, "examples/browser/app.ts"), join(dir, "app.js"));
  await Deno.copyFile(join(ROOT, "examples/browser/index.html"), join(dir, "index.html"));
}

/**
 * The folder the user ran the command from: `deno task` runs a task in its deno.json's folder (the link's target
 * when the framework is a symbolic link) and names the caller's in INIT_CWD.
 */
export function callerDir(): string {
  return Deno.env.get("INIT_CWD") ?? Deno.cwd();
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" }, example: { type: "boolean" } },
    allowPositionals: true,
  });
  const here = callerDir();
  if (values.out !== undefined) values.out = resolve(here, values.out);
  if (positionals[0] !== undefined) positionals[0] = resolve(here, positionals[0]);
  try {
    if (values.example) {
      const dir = values.out ?? join(ROOT, "dist/browser/example");
      await buildExample(dir);
      console.log(`example page in ${dir}: serve the folder and open index.html?server=ws://HOST:PORT/`);
    } else {
      const out = values.out ?? join(ROOT, "dist/browser/seamless.js");
      await bundle(positionals[0] ?? join(ROOT, "client/browser.ts"), out);
      console.log(`${out}: ${(await Deno.stat(out)).size} bytes`);
    }
  } catch (e) {
    console.error(`error: ${errorText(e)}`);
    Deno.exit(1);
  }
}
