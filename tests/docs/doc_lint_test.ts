/**
 * The script API reference stays whole: `deno doc --lint` over the package's server entry points (mod.ts, defs.ts)
 * finds no exported symbol without a doc comment, no exported function without a return type, and no exported type
 * that references one a game developer cannot import (docs/game.md, "A game in its own repository").
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY_POINTS = ["mod.ts", "defs.ts"];

Deno.test("deno doc --lint finds nothing in mod.ts and defs.ts", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...ENTRY_POINTS],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // One line per problem: its rule and where, so that a failure says what to document.
  const problems = [...text.matchAll(/^(error\[[\w-]+\]: .*)\n\s*--> (\S+)/gm)].map((m) => `${m[2]}: ${m[1]}`);
  assert.deepEqual(problems, [], text);
  assert.equal(out.code, 0, text);
  assert.match(text, /Checked 2 files/, "deno doc read both entry points");
});
