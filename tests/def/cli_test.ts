import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url).pathname;

async function defs(target: string): Promise<{ code: number; out: string; err: string }> {
  const p = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "tools/defs.ts", target],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: p.code, out: dec.decode(p.stdout), err: dec.decode(p.stderr) };
}

const CORPUS = "../shared/corpus/kbengine_demos_assets";
/** The corpus lives beside the repository, in the workspace's shared folder; a bare clone has none. */
const HAS_CORPUS = (() => {
  try {
    return Deno.statSync(`${ROOT}${CORPUS}/entities.xml`).isFile;
  } catch {
    console.log(`skipping the corpus part of the defs test: ${CORPUS} is not there (a clone without ../shared)`);
    return false;
  }
})();

Deno.test("deno task defs prints the corpus, the seeds and the TypeScript registry as JSON", async () => {
  const [corpus, seeds, ts] = await Promise.all([
    HAS_CORPUS ? defs(CORPUS) : Promise.resolve(null),
    defs("tests/def/fixtures/seeds"),
    defs("entities/"),
  ]);
  if (corpus) {
    assert.equal(corpus.code, 0, corpus.err);
    const c = JSON.parse(corpus.out);
    assert.equal(c.types.length, 9);
    const avatar = c.types.find((t: { name: string }) => t.name === "Avatar");
    assert.ok(avatar.properties.some((p: { name: string }) => p.name === "HP"), "interface properties included");
    for (const k of ["name", "type", "flags", "audiences", "default", "persistent", "detailLevel"]) {
      assert.ok(k in avatar.properties[0], k);
    }
    assert.ok("exposed" in avatar.methods.cell[0]);
    assert.match(corpus.err, /warning: .*Avatar\.def:\d+: Avatar\.level: <Utype>/);
  }

  assert.equal(seeds.code, 0, seeds.err);
  const seat = JSON.parse(seeds.out).types.find((t: { name: string }) => t.name === "Seat");
  assert.deepEqual(seat.properties[0].audiences, ["cell", "ghost", "otherClients"]);
  assert.equal(seat.properties[0].detailLevel, "NEAR");
  assert.equal(seat.methods.client[0].detailDistance, 30);

  assert.equal(ts.code, 0, ts.err);
  assert.deepEqual(JSON.parse(ts.out).types.map((t: { name: string }) => t.name), [
    "Account",
    "Avatar",
    "NPC",
    "Guild",
    "Dungeon",
  ]);
});

Deno.test("deno task defs exits non-zero on a bad file, naming file:line, entity and property", async () => {
  const r = await defs("tests/def/fixtures/bad_flag");
  assert.equal(r.code, 1);
  assert.equal(r.out, "");
  assert.match(r.err, /bad_flag\/entity_defs\/Thing\.def:9: Thing\.broken: unknown flag 'EVERYONE'/);
});
