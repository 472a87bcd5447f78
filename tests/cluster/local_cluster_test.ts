import assert from "node:assert/strict";
import type { ClusterView } from "../../core/views.ts";
import { api, isAlive as alive, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { CHILD_V8_FLAGS } from "../../cli/local_cluster.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function startCluster(procs: Procs, kv: string) {
  const parent = await procs.start(["--port=0", "--admin-port=0", `--kv=${kv}`], { readyTimeoutMs: 60_000 });
  const children = parent.ready.children as { role: string; pid: number }[];
  // The test owns these pids too: they are killed by pid even if the parent dies first.
  for (const c of children) procs.adopt(c.pid);
  return { parent, children, admin: parent.ready.admin! };
}

Deno.test("the local cluster starts four processes and POST /api/shutdown ends them all", opts, async () => {
  await using procs = new Procs();
  const dir = await Deno.makeTempDir();
  try {
    const { parent, children, admin } = await startCluster(procs, `${dir}/kv/cluster.kv`);
    assert.deepEqual(children.map((c) => c.role), ["cellappmgr", "cellapp", "cellapp", "baseapp"]);
    const view = await waitFor("two cellapps and one baseapp", async () => {
      const v = (await api(admin, "/api/cluster")).body as ClusterView;
      const roles = v.processes.map((p) => p.role).sort();
      return roles.join() === "baseapp,cellapp,cellapp,cellappmgr" ? v : null;
    });
    assert.deepEqual(view.processes.map((p) => p.pid).sort(), children.map((c) => c.pid).sort());
    const stat = await Deno.stat(`${dir}/kv/cluster.kv`);
    assert.ok(stat.isFile, "Deno KV lives in the file given by --kv");

    const res = await api(admin, "/api/shutdown", { method: "POST", headers: { "content-type": "application/json" } });
    assert.equal(res.status, 202);
    assert.deepEqual(res.body, { stopping: true, processes: 3 });
    const status = await parent.status;
    assert.equal(status.code, 0, parent.stderr.join("\n"));
    for (const c of children) assert.ok(!alive(c.pid), `${c.role} pid ${c.pid} is gone`);
    // Processes stopped by the shutdown are logged as leaving, not warned of as failures.
    const left = parent.stderr.filter((l) => / left: /.test(l));
    assert.equal(left.length, 3, parent.stderr.join("\n"));
    assert.ok(!left.some((l) => /WARN/.test(l)), left.join("\n"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("SIGTERM to the local cluster stops every child", opts, async () => {
  await using procs = new Procs();
  const dir = await Deno.makeTempDir();
  try {
    const { parent, children } = await startCluster(procs, `${dir}/c.kv`);
    parent.kill("SIGTERM");
    const status = await parent.status;
    assert.equal(status.code, 0);
    for (const c of children) assert.ok(!alive(c.pid), `${c.role} pid ${c.pid} is gone`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test(
  "the local cluster restarts a child that dies: a killed cellapp is replaced, a killed cellappmgr comes back on its ports",
  opts,
  async () => {
    await using procs = new Procs();
    const dir = await Deno.makeTempDir();
    try {
      const { parent, children, admin } = await startCluster(procs, `${dir}/c.kv`);
      const cluster = async () => ((await api(admin, "/api/cluster")).body as ClusterView).processes;
      await waitFor("every child registered", async () => (await cluster()).length === 4);
      const cellapp = children.find((c) => c.role === "cellapp")!;
      Deno.kill(cellapp.pid, "SIGKILL");
      const known = new Set(children.map((c) => c.pid));
      const fresh = await waitFor("a new cellapp registered in its place", async () => {
        const apps = (await cluster()).filter((p) => p.role === "cellapp");
        return apps.length === 2 ? apps.find((p) => !known.has(p.pid)) : null;
      }, 20_000);
      procs.adopt(fresh.pid);
      assert.ok(
        parent.stderr.some((l) => l.includes(`cellapp pid ${cellapp.pid} died (killed by SIGKILL); restarting it in`)),
        parent.stderr.slice(-20).join("\n"),
      );

      const mgr = children.find((c) => c.role === "cellappmgr")!;
      Deno.kill(mgr.pid, "SIGKILL");
      const back = await waitFor("the cellappmgr back at the same admin URL with every member", async () => {
        const all = await cluster();
        const self = all.find((p) => p.role === "cellappmgr");
        return self && self.pid !== mgr.pid && all.length === 4 ? self : null;
      }, 20_000);
      procs.adopt(back.pid);

      // A child that exits cleanly on request is not restarted: the cluster ends.
      const res = await api(admin, "/api/shutdown", {
        method: "POST",
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.status, 202);
      assert.equal((await parent.status).code, 0, parent.stderr.slice(-20).join("\n"));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test(
  "the local cluster's children get CHILD_V8_FLAGS, or SEAMLESS_V8_FLAGS, then DENO_V8_FLAGS",
  opts,
  async () => {
    const v8FlagsOf = (pid: number) =>
      Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0").find((e) => e.startsWith("DENO_V8_FLAGS="))?.slice(14);
    const ours = (role: string) => CHILD_V8_FLAGS[role] || undefined;
    const cases: [Record<string, string>, (role: string) => string | undefined][] = [
      [{}, ours],
      [{ DENO_V8_FLAGS: "--stack-size=2000" }, (r) => [ours(r), "--stack-size=2000"].filter((f) => f).join(",")],
      [{ SEAMLESS_V8_FLAGS: "--max-semi-space-size=4" }, () => "--max-semi-space-size=4"],
      // Empty: V8's own settings, and no empty DENO_V8_FLAGS (Deno would refuse to start).
      [{ SEAMLESS_V8_FLAGS: "" }, () => undefined],
    ];
    assert.ok(ours("cellapp"), "the cellapp has flags of its own");
    for (const [env, want] of cases) {
      await using procs = new Procs();
      const parent = await procs.start(["--port=0", "--admin-port=0", "--kv=:memory:", "--cellapps=1"], {
        env,
        readyTimeoutMs: 60_000,
      });
      const children = parent.ready.children as { role: string; pid: number }[];
      for (const c of children) procs.adopt(c.pid);
      assert.equal(children.length, 3);
      for (const c of children) assert.equal(v8FlagsOf(c.pid), want(c.role), `${c.role} pid ${c.pid}`);
    }
  },
);
