import assert from "node:assert/strict";
import type { ClusterView } from "../../core/views.ts";
import { api, isAlive, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** The pids the local cluster says it started again, from its log. */
function restartedPids(stderr: string[]): number[] {
  return stderr.flatMap((l) => {
    const m = /restarted: pid (\d+) replaces/.exec(l);
    return m ? [Number(m[1])] : [];
  });
}

/** Starts a local cluster (its children adopted by `procs`) and waits until every child has registered. */
async function startLocal(procs: Procs) {
  const parent = await procs.start(["--port=0", "--admin-port=0", "--kv=:memory:"], { readyTimeoutMs: 60_000 });
  const children = parent.ready.children as { role: string; pid: number }[];
  for (const c of children) procs.adopt(c.pid);
  const admin = parent.ready.admin!;
  const cluster = async () => ((await api(admin, "/api/cluster")).body as ClusterView).processes;
  await waitFor("every child registered", async () => (await cluster()).length === 4);
  return { parent, children, admin, cluster };
}

/** POSTs /api/shutdown; resolves with the parent's exit status, or null if it still runs 5 s later, and the time. */
async function shutdown(parent: Proc, admin: string): Promise<{ status: Deno.CommandStatus | null; took: number }> {
  const t0 = performance.now();
  const res = await api(admin, "/api/shutdown", { method: "POST", headers: { "content-type": "application/json" } });
  assert.equal(res.status, 202);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const status = await Promise.race([
    parent.status,
    new Promise<null>((r) => (timer = setTimeout(() => r(null), 5000))),
  ]);
  clearTimeout(timer);
  return { status, took: performance.now() - t0 };
}

Deno.test(
  "a cellapp restarted just before POST /api/shutdown, not yet registered, is stopped with the rest within 5 s",
  opts,
  async () => {
    await using procs = new Procs();
    const { parent, children, admin } = await startLocal(procs);
    const cellapp = children.find((c) => c.role === "cellapp")!;
    Deno.kill(cellapp.pid, "SIGKILL");
    const fresh = await waitFor("the killed cellapp restarted", () => restartedPids(parent.stderr)[0], 15_000, 10);
    procs.adopt(fresh);
    const { status, took } = await shutdown(parent, admin);
    assert.ok(
      status !== null,
      `the local cluster still runs 5 s after POST /api/shutdown:\n${parent.stderr.slice(-30).join("\n")}`,
    );
    assert.equal(status.code, 0, parent.stderr.slice(-30).join("\n"));
    console.log(`the local cluster exited ${Math.round(took)} ms after POST /api/shutdown`);
    for (const pid of [...children.map((c) => c.pid), fresh]) assert.ok(!isAlive(pid), `pid ${pid} is gone`);
  },
);

Deno.test(
  "a cellapp killed just before POST /api/shutdown is not restarted, and the local cluster exits within 5 s",
  opts,
  async () => {
    await using procs = new Procs();
    const parent = await procs.start(["--port=0", "--admin-port=0", "--kv=:memory:"], { readyTimeoutMs: 60_000 });
    const children = parent.ready.children as { role: string; pid: number }[];
    for (const c of children) procs.adopt(c.pid);
    const admin = parent.ready.admin!;
    const cluster = async () => ((await api(admin, "/api/cluster")).body as ClusterView).processes;
    await waitFor("every child registered", async () => (await cluster()).length === 4);

    const cellapp = children.find((c) => c.role === "cellapp")!;
    Deno.kill(cellapp.pid, "SIGKILL");
    await waitFor(
      "the killed cellapp gone from /api/cluster",
      async () => {
        return !(await cluster()).some((p) => p.pid === cellapp.pid);
      },
      15_000,
      20,
    );
    const t0 = performance.now();
    const res = await api(admin, "/api/shutdown", { method: "POST", headers: { "content-type": "application/json" } });
    assert.equal(res.status, 202);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const status = await Promise.race([
      parent.status,
      new Promise<null>((r) => (timer = setTimeout(() => r(null), 5000))),
    ]);
    clearTimeout(timer);
    const took = performance.now() - t0;
    const restarted = restartedPids(parent.stderr);
    for (const pid of restarted) procs.adopt(pid);
    assert.ok(
      status !== null,
      `the local cluster still runs 5 s after POST /api/shutdown:\n${parent.stderr.slice(-30).join("\n")}`,
    );
    assert.equal(status.code, 0, parent.stderr.slice(-30).join("\n"));
    console.log(`the local cluster exited ${Math.round(took)} ms after POST /api/shutdown`);
    const begun = parent.stderr.findIndex((l) => l.includes("a cluster shutdown has begun"));
    assert.ok(begun >= 0, "the local cluster learnt that the shutdown began");
    assert.deepEqual(restartedPids(parent.stderr.slice(begun)), [], "no child is started again once it has begun");
    for (const c of children) assert.ok(!isAlive(c.pid), `${c.role} pid ${c.pid} is gone`);
    for (const pid of restarted) assert.ok(!isAlive(pid), `restarted pid ${pid} is gone`);
  },
);
