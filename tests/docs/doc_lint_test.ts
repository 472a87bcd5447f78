/**
 * The API reference stays whole: `deno doc --lint` over the package's entry points (the server's mod.ts and
 * defs.ts, and the client SDK's client/mod.ts) finds no exported symbol without a doc comment, no exported function without a return type, and no exported type
 * that references one a game developer cannot import (docs/game.md, "A game in its own repository").
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY_POINTS = ["mod.ts", "defs.ts", "client/mod.ts"];

Deno.test("deno doc --lint finds nothing in mod.ts, defs.ts and client/mod.ts", async () => {
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
  assert.match(text, /Checked 3 files/, "deno doc read every entry point");
});

Deno.test("deno task doc writes the reference of every entry point", async () => {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)) as { tasks: Record<string, string> };
  const task = config.tasks.doc.split(/\s+/);
  for (const entry of ENTRY_POINTS) {
    assert.ok(task.includes(entry), `deno task doc names ${entry}: ${config.tasks.doc}`);
  }
  // The task's own `deno doc --html` arguments, into a folder of this test's rather than dist/.
  const out = await Deno.makeTempDir({ prefix: "doc_html_" });
  try {
    const args = task.slice(task.indexOf("doc")).map((a) => a.startsWith("--output=") ? `--output=${out}` : a);
    const res = await new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
    assert.equal(res.code, 0, new TextDecoder().decode(res.stderr));
    const client = await Deno.readTextFile(`${out}/client/~/ClientWorld.html`);
    assert.match(client, /The client-side AOI model/, "the client SDK's pages are written");
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
