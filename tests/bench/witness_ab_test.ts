/**
 * `bench witness_ab` (bench/witness_ab.ts) compares this checkout's witness with another checkout's in one process.
 * Its byte check must hold for a copy of this very code and catch a copy whose witness sends otherwise.
 */
import assert from "node:assert/strict";
import { compareWitness } from "../../bench/witness_ab.ts";
import { quietLog, type SceneOptions } from "../../bench/lib/witness_scene.ts";

const REPO = new URL("../../", import.meta.url);
/** What the scene loads from a checkout, and what that imports. */
const DIRS = ["cell", "client", "core", "entities", "testing"];

async function copyDir(from: URL, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copyDir(new URL(`${e.name}/`, from), `${to}/${e.name}`);
    else if (e.isFile) await Deno.copyFile(new URL(e.name, from), `${to}/${e.name}`);
  }
}

/** A copy of the code the scene needs, in a folder of its own. */
async function checkout(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "witness_ab_" });
  for (const d of DIRS) await copyDir(new URL(`${d}/`, REPO), `${dir}/${d}`);
  return dir;
}

const opts: SceneOptions = { entities: 400, witnesses: 40, radius: 100, side: 400, speed: 5, log: quietLog() };

Deno.test("witness_ab: a copy of this code sends the same bytes; a copy that sends otherwise is caught", async () => {
  const same = await checkout(), changed = await checkout();
  try {
    // The planted change: far entities come round more often, so the frames differ from the first ticks on.
    const file = `${changed}/cell/witness/witness_options.ts`;
    const text = await Deno.readTextFile(file);
    assert.ok(text.includes("distanceWeighting: 0.2,"), "the default to change is where the test expects it");
    await Deno.writeTextFile(file, text.replace("distanceWeighting: 0.2,", "distanceWeighting: 0.1,"));

    const a = await compareWitness(same, opts, 10);
    assert.equal(a.sameBytes, true, "this code against a copy of itself");
    assert.ok(a.witness > 0 && Number.isFinite(a.witness) && a.ourMs > 0 && a.theirMs > 0, JSON.stringify(a));
    const b = await compareWitness(changed, opts, 10);
    assert.equal(b.sameBytes, false, "the planted change must show in the bytes");
  } finally {
    await Deno.remove(same, { recursive: true });
    await Deno.remove(changed, { recursive: true });
  }
});

Deno.test("witness_ab: a folder that is not a checkout is named in the error", async () => {
  const dir = await Deno.makeTempDir({ prefix: "witness_ab_empty_" });
  try {
    await assert.rejects(() => compareWitness(dir, opts, 10), (e: Error) => e.message.includes(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
