import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const BOTS = fileURLToPath(new URL("../../tools/bots.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

Deno.test(
  "deno task bots: finds the baseapp through the admin API, runs the clients and prints one JSON report",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    const admin = mgr.ready.admin!;
    await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`]);
    await procs.start(["--role=base", "--port=0", `--mgr=${mgr.ready.address}`]);
    await waitFor("a baseapp with a clientUrl and the default space", async () => {
      const c = (await api(admin, "/api/cluster")).body as ClusterView;
      return c.processes.some((p) => p.clientUrl) && (await api(admin, "/api/spaces/1")).status === 200;
    }, 30_000);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--config",
        CONFIG,
        BOTS,
        "--admin",
        admin,
        "--count",
        "4",
        "--duration",
        "2",
        "--warmup",
        "1",
      ]
        .concat(["--side", "40", "--prop-every", "0.5", "--json"]),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    const report = JSON.parse(new TextDecoder().decode(out.stdout));
    assert.deepEqual(Object.keys(report), [
      "clients",
      "connected",
      "seconds",
      "enters",
      "leaves",
      "updatesPerClientPerSec",
      "movesPerClientPerSec",
      "bytesPerClientPerSec",
      "propertyEvents",
      "outOfOrder",
      "gaps",
      "latencyP50Ms",
      "latencyP99Ms",
      "errors",
    ]);
    assert.equal(report.clients, 4);
    assert.equal(report.connected, 4, stderr);
    assert.ok(report.seconds >= 2);
    assert.ok(report.movesPerClientPerSec > 7 && report.movesPerClientPerSec <= 10.5, `10 moves/s: ${stderr}`);
    assert.equal(report.outOfOrder, 0);
    assert.equal(report.gaps, 0);
    assert.ok(registry.get("Avatar").findMethod("cell", "raiseCounter"), "the bots raise the Avatar's counter");
    assert.equal(report.errors, 0, stderr);
  },
);

Deno.test("deno task bots: a missing or bad flag is refused with the usage", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, BOTS, "--admin", "http://127.0.0.1:9", "--count", "0", "--duration", "1"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 2);
  assert.match(new TextDecoder().decode(out.stderr), /--count: "0" is not in 1-5000[\s\S]*Usage/);
});
