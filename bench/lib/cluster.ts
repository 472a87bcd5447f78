/**
 * A local cluster for benchmarks: `main.ts` with no role, started with the
 * given flags, ready once the admin API lists the processes a benchmark
 * needs; stopped through the admin API, or killed by pid if that fails.
 */
import { fileURLToPath } from "node:url";
import { parseReady, splitLines } from "../../cli/local_cluster.ts";
import type { ClusterView } from "../../core/views.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A running local cluster. */
export interface BenchCluster {
  /** Admin API base URL. */
  admin: string;
  /** The parent process. */
  child: Deno.ChildProcess;
  /** Shuts the cluster down and waits for its parent to exit. */
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
 * Starts `deno task start` with `flags` on free ports and waits until
 * `cellapps` cellapps (and a baseapp with a client URL, when `baseapp`) are registered.
 */
export async function startBenchCluster(
  flags: string[],
  want: { cellapps: number; baseapp: boolean },
): Promise<BenchCluster> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", `${ROOT}deno.json`, `${ROOT}main.ts`, "--port=0", "--admin-port=0", ...flags],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const stop = async () => {
    try {
      if (admin) {
        await fetch(`${admin}/api/shutdown`, { method: "POST", headers: { "content-type": "application/json" } });
      }
      await Promise.race([child.status, new Promise((r) => setTimeout(r, 15_000))]);
    } finally {
      try {
        child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
  };
  let admin = "";
  try {
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
    while (!admin) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the local cluster exited before it was ready");
      admin = parseReady(value)?.admin ?? "";
    }
    (async () => {
      while (!(await lines.read()).done) { /* drain */ }
    })().catch(() => {});
    for (let i = 0; i < 300; i++) {
      const c = await json<ClusterView>(`${admin}/api/cluster`);
      const cellapps = c.processes.filter((p) => p.role === "cellapp").length;
      const base = c.processes.some((p) => p.role === "baseapp" && p.clientUrl);
      if (cellapps >= want.cellapps && (base || !want.baseapp)) return { admin, child, stop };
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the local cluster did not register ${want.cellapps} cellapps in 30 s`);
  } catch (e) {
    await stop();
    throw e;
  }
}
