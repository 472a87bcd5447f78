/**
 * The plumbing of `deno task bench chaos --hosts`, shorter: two cellapps and a baseapp on test hosts over
 * PostgreSQL, a 2-cell space with NPCs and a few bots, one cellapp cut off from the cellappmgr for 3 s (then 3 s to
 * settle, in which the cut-off cellapp hears it was fenced). The cellappmgr declares it dead, the world is whole
 * again after the heal, and the history checker read every process's claims and found no overlap and no loss.
 */
import assert from "node:assert/strict";
import { HOSTS_CHAOS_DEFAULTS, runHostsChaos } from "../../bench/lib/chaos_hosts.ts";
import { HostsCluster } from "../../testing/hosts_cluster.ts";
import { postgresMissing } from "../../testing/postgres.ts";
import { within } from "../../testing/wait.ts";

const why = (await HostsCluster.unavailable()) ?? postgresMissing();
if (why) console.log(`tests/hosts/chaos_hosts_test.ts skipped: ${why}`);

Deno.test(
  "chaos --hosts: a cellapp cut off from the cellappmgr is detected, healed, and the claim logs check clean",
  { ignore: why !== null, sanitizeOps: false, sanitizeResources: false },
  async () => {
    const lines: string[] = [];
    const report = await within(
      "the chaos --hosts run",
      runHostsChaos({
        ...HOSTS_CHAOS_DEFAULTS,
        cellapps: 2,
        baseapps: 1,
        cells: 2,
        npcs: 40,
        bots: 4,
        side: 200,
        faults: ["cellapp-from-mgr"],
        faultSeconds: 3,
        settleSeconds: 3,
        wholeWithinSeconds: 15,
        warmup: 2,
        seed: 1,
        log: (l) => lines.push(l),
      }),
      60_000,
    );
    console.log(lines.join("\n"));
    const text = `${lines.join("\n")}\n${report.historyText}\n${JSON.stringify({ ...report, logs: undefined })}`;
    assert.equal(report.faults.length, 1, text);
    const [f] = report.faults;
    assert.match(f.detected ?? "", /^cellapp /, `the cellappmgr declared the cut-off cellapp dead\n${text}`);
    assert.ok(f.afterHealMs !== null, `the world was whole again after the heal\n${text}`);
    // The checker had claims to check: both cellapps' and the baseapp's, every NPC and bot among them.
    assert.equal(report.history.summary.processes, 3, text);
    assert.ok(report.history.summary.entities >= 44, text);
    assert.equal(report.history.overlaps.length, 0, text);
    assert.equal(report.history.lost.length, 0, text);
    assert.equal(report.botsConnectedAtEnd, 4, text);
  },
);
