/**
 * A cluster for benchmarks: the processes `deno task start` would run with the
 * given flags (one cellappmgr, the cellapps, the baseapps), each started
 * directly as a deployment runs them, without the local cluster's parent in
 * between; ready once the admin API lists the processes a benchmark needs;
 * stopped through the admin API, or killed by pid if that fails.
 */
import { parseCommand } from "../../core/config/mod.ts";
import { createLogger, type Logger } from "../../core/log.ts";
import type { ClusterView } from "../../core/views.ts";
import {
  baseappFlags,
  cellappFlags,
  cellappmgrFlags,
  type Child,
  childEnv,
  READY_TIMEOUT_MS,
  spawnSelf,
  withTimeout,
} from "../../cli/local_cluster.ts";

/**
 * How a benchmark starts one process of its cluster: `role`'s process with `flags` and `env`, its ready line awaited
 * by the caller. spawnSelf runs it on this host; a benchmark may pass another (one that runs each process on its own
 * test host, say) without changing anything else.
 */
export type SpawnProcess = (role: string, flags: string[], env: Record<string, string>, log: Logger) => Child;

/** A running benchmark cluster. */
export interface BenchCluster {
  /** Admin API base URL. */
  admin: string;
  /** Every process of the cluster, the cellappmgr first. */
  processes: { role: string; pid: number }[];
  /** Shuts the cluster down and waits for its processes to exit. */
  stop(): Promise<void>;
}

/** GETs or sends JSON; throws with the status and body when the answer is not 2xx. */
export async function json<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  const body = await res.json();
  if (!res.ok) throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body as T;
}

/**
 * Starts the processes of `deno task start` with `flags` (local-cluster
 * flags: --cellapps, --baseapps, --kv, …) on free ports and waits until
 * `cellapps` cellapps (and a baseapp with a client URL, when `baseapp`) are registered. Each process is started
 * with `spawn`.
 */
export async function startBenchCluster(
  flags: string[],
  want: { cellapps: number; baseapp: boolean },
  spawn: SpawnProcess = spawnSelf,
  /** The URL this process reaches an announced one by (a forward into a test host); the same by default. */
  reach: (url: string) => Promise<string> = (url) => Promise.resolve(url),
): Promise<BenchCluster> {
  const parsed = parseCommand(["--port=0", "--admin-port=0", ...flags]);
  if (parsed.help) throw new Error("startBenchCluster: --help is not a cluster flag");
  const cfg = parsed.config;
  const env = childEnv(cfg);
  const log = createLogger("bench-cluster", cfg.logLevel);
  const children: Child[] = [];
  let admin = "";
  const stop = async () => {
    try {
      if (admin) {
        await fetch(`${admin}/api/shutdown`, { method: "POST", headers: { "content-type": "application/json" } })
          .then((r) => r.body?.cancel())
          .catch(() => {});
      }
      await Promise.race([
        Promise.allSettled(children.map((c) => c.status)),
        new Promise((r) => setTimeout(r, 15_000)),
      ]);
    } finally {
      for (const c of children) {
        try {
          c.process.kill("SIGKILL");
        } catch {
          // already exited
        }
      }
      await Promise.allSettled(children.map((c) => c.status));
    }
  };
  try {
    const mgr = spawn("cellappmgr", cellappmgrFlags(cfg, cfg.port, cfg.adminPort), env, log);
    children.push(mgr);
    const mgrReady = await withTimeout(mgr.ready, READY_TIMEOUT_MS, "the cellappmgr");
    if (!mgrReady.admin || !mgrReady.address) throw new Error("the cellappmgr announced no admin API or address");
    admin = await reach(mgrReady.admin);
    for (let i = 0; i < cfg.cellapps; i++) {
      children.push(spawn("cellapp", cellappFlags(cfg, mgrReady.address), env, log));
    }
    for (let i = 0; i < cfg.baseapps; i++) {
      children.push(spawn("baseapp", baseappFlags(cfg, mgrReady.address), env, log));
    }
    await Promise.all(children.map((c) => withTimeout(c.ready, READY_TIMEOUT_MS, `the ${c.role} (pid ${c.pid})`)));
    const processes = children.map((c) => ({ role: c.role, pid: c.pid }));
    for (let i = 0; i < 300; i++) {
      const c = await json<ClusterView>(`${admin}/api/cluster`);
      const cellapps = c.processes.filter((p) => p.role === "cellapp").length;
      const base = c.processes.some((p) => p.role === "baseapp" && p.clientUrl);
      if (cellapps >= want.cellapps && (base || !want.baseapp)) return { admin, processes, stop };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the cluster did not register ${want.cellapps} cellapps in 30 s`);
  } catch (e) {
    await stop();
    throw e;
  }
}
