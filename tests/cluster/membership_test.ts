import assert from "node:assert/strict";
import type { ClusterView, ProcessView } from "../../core/views.ts";
import { api, freePort, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const cluster = async (admin: string): Promise<ProcessView[]> =>
  ((await api(admin, "/api/cluster")).body as ClusterView).processes;

const members = async (admin: string, role?: string) =>
  (await cluster(admin)).filter((p) => p.role !== "cellappmgr" && (!role || p.role === role));

async function startMgr(
  procs: Procs,
  port = 0,
  extra: string[] = [],
): Promise<Proc> {
  return await procs.start([
    "--role=cellappmgr",
    `--port=${port}`,
    "--admin-port=0",
    ...extra,
  ]);
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "processes register, heartbeat, and a killed or hung one is dropped within 3 s",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await startMgr(procs);
    const admin = mgr.ready.admin!;
    const join = ["--port=0", `--mgr=${mgr.ready.address}`];
    const [c1, c2, b1] = await Promise.all([
      procs.start(["--role=cell", ...join]),
      procs.start(["--role=cellapp", ...join]),
      procs.start(["--role=base", ...join, "--kv=:memory:"]),
    ]);
    const list = await waitFor("three members", async () => {
      const m = await members(admin);
      return m.length === 3 && m.every((p) => p.lastHeartbeatMsAgo < 1500) ? m : null;
    });
    const self = (await cluster(admin))[0];
    assert.equal(self.role, "cellappmgr");
    assert.equal(self.pid, mgr.pid);
    assert.deepEqual(
      list.map((p) => [p.role, p.pid, p.address]).sort(),
      [
        ["baseapp", b1.pid, b1.ready.address],
        ["cellapp", c1.pid, c1.ready.address],
        ["cellapp", c2.pid, c2.ready.address],
      ].sort(),
    );
    for (const p of list) {
      assert.equal(typeof p.id, "number");
      assert.ok(p.uptimeS >= 0 && p.uptimeS < 60, `uptime ${p.uptimeS}`);
      assert.ok(p.load >= 0 && p.load < 2, `load ${p.load} is a busy share of wall time`);
    }

    // SIGKILL closes the socket: the cellappmgr drops the cellapp at once.
    const t0 = performance.now();
    c1.kill("SIGKILL");
    await waitFor(
      "the killed cellapp to leave",
      async () => !(await members(admin)).some((p) => p.pid === c1.pid),
      3000,
    );
    assert.ok(performance.now() - t0 < 3000);

    // A stopped (hung) process keeps its socket open: only missed heartbeats reveal it.
    const t1 = performance.now();
    c2.kill("SIGSTOP");
    try {
      await waitFor(
        "the hung cellapp to leave",
        async () => !(await members(admin)).some((p) => p.pid === c2.pid),
        3500,
      );
      const took = performance.now() - t1;
      assert.ok(took < 3000, `dropped after ${Math.round(took)} ms`);
      assert.ok(
        took > 1000,
        "a hung process is dropped for missed heartbeats, not at once",
      );
    } finally {
      c2.kill("SIGCONT");
    }
    // The baseapp kept running and heartbeating throughout.
    const left = await members(admin);
    assert.ok(
      left.some((p) => p.pid === b1.pid && p.lastHeartbeatMsAgo < 1500),
    );
    // The resumed cellapp notices its closed channel and registers again.
    await waitFor(
      "the resumed cellapp to return",
      async () => (await members(admin)).some((p) => p.pid === c2.pid),
    );
  },
);

Deno.test(
  "a member started before the cellappmgr, and every member after a cellappmgr restart, register by themselves",
  opts,
  async () => {
    await using procs = new Procs();
    const port = freePort();
    const mgrAddr = `127.0.0.1:${port}`;
    const early = await procs.start([
      "--role=cellapp",
      "--port=0",
      `--mgr=${mgrAddr}`,
    ]);
    const base = await procs.start([
      "--role=baseapp",
      "--port=0",
      `--mgr=${mgrAddr}`,
      "--kv=:memory:",
    ]);
    const mgr1 = await startMgr(procs, port);
    const before = await waitFor("both members", async () => {
      const m = await members(mgr1.ready.admin!);
      return m.length === 2 ? m : null;
    });
    mgr1.kill("SIGKILL");
    await mgr1.status;
    const mgr2 = await startMgr(procs, port);
    const after = await waitFor("both members again", async () => {
      const m = await members(mgr2.ready.admin!);
      return m.length === 2 ? m : null;
    }, 8000);
    const ids = (l: ProcessView[]) => l.map((p) => [p.pid, p.id]).sort();
    assert.deepEqual(
      ids(after),
      ids(before),
      "each process keeps its id across the restart",
    );
    assert.deepEqual(
      after.map((p) => p.pid).sort(),
      [early.pid, base.pid].sort(),
    );
  },
);

Deno.test(
  "a process with the wrong cluster secret is refused and never listed",
  opts,
  async () => {
    await using procs = new Procs();
    const mgr = await startMgr(procs, 0, ["--secret=right"]);
    const join = ["--role=cellapp", "--port=0", `--mgr=${mgr.ready.address}`];
    const good = await procs.start(join, { env: { SEAMLESS_SECRET: "right" } });
    const bad = await procs.start([...join, "--secret=wrong"]);
    await waitFor(
      "the good cellapp",
      async () => (await members(mgr.ready.admin!)).some((p) => p.pid === good.pid),
    );
    await waitFor(
      "the refusal in the log",
      () => mgr.stderr.some((l) => l.includes("refusing peer: wrong cluster secret")),
    );
    await waitFor(
      "the refused side to say why",
      () => bad.stderr.some((l) => l.includes("wrong cluster secret")),
    );
    assert.ok(
      !(await members(mgr.ready.admin!)).some((p) => p.pid === bad.pid),
    );
  },
);
