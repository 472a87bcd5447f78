/**
 * What only a cellappmgr sends, fuzzed on the link a real cellapp and a real baseapp open to it (tools/fuzz/
 * mgr_link.ts): game reloads and the geometry of spaces (navGeometry, shutDownWhenEmpty) among the rest, benign and
 * mutated. No input may crash or hang the member, and afterwards it still answers its cellappmgr and its port.
 */
import assert from "node:assert/strict";
import { FakeMgr, fuzzMgrLink } from "../../tools/fuzz/mgr_link.ts";
import { targetRole } from "../../tools/fuzz/raw_conn.ts";
import { fileURLToPath } from "node:url";
import { isAlive, type Proc, Procs } from "../../testing/procs.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 20261127);
const COUNT = Number(Deno.env.get("FUZZ_LINK_COUNT") ?? 1000);
const SECRET = "fuzz-secret";
/** Where the sample game's folder is copied on each reload (cli/game_source.ts): beside entities/, at the root. */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Ends `p` and removes the copies of the game its reloads made (a killed process leaves them). */
async function end(p: Proc): Promise<void> {
  p.kill("SIGKILL");
  await p.status;
  for await (const e of Deno.readDir(ROOT)) {
    if (e.name.startsWith(`.entities.reload-${p.pid}-`)) await Deno.remove(`${ROOT}${e.name}`, { recursive: true });
  }
}

for (const [role, flags] of [["cellapp", ["--role=cell"]], ["baseapp", ["--role=base", "--client-port=0"]]] as const) {
  Deno.test(
    `fuzz: ${COUNT} inputs from its cellappmgr to a ${role} (seed ${SEED}): no crash, still serving`,
    opts,
    async () => {
      await using procs = new Procs();
      const mgr = FakeMgr.listen(SECRET);
      let p: Proc | null = null;
      try {
        const env = { SEAMLESS_SECRET: SECRET, SEAMLESS_LOG_LEVEL: "error" };
        p = await procs.start([...flags, "--port=0", `--mgr=${mgr.address}`], { env });
        const report = await fuzzMgrLink({ mgr, seed: SEED, count: COUNT });
        console.log(
          `fuzz ${role} link: ${report.inputs} inputs in ${Math.round(report.ms)} ms, ${report.connections} links, ` +
            `${report.dropped} dropped; most frequent drops: ${JSON.stringify(report.reasons)}`,
        );
        assert.equal(report.inputs, COUNT);
        if (Deno.env.get("FUZZ_LINK_LOG")) console.log(p.stderr.join("\n"));
        assert.ok(isAlive(p.pid), `the ${role} is alive:\n${p.stderr.slice(-20).join("\n")}`);
        assert.equal(await targetRole(p.ready.address!), role, "its port still takes connections");
      } finally {
        mgr.close();
        if (p) await end(p);
      }
    },
  );
}
