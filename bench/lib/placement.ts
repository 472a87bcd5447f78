/**
 * Where a benchmark's processes run: on this host (loopback), or each on a test host of its own (a network namespace,
 * testing/hosts.ts) with this process reaching them through forwards from a client host.
 */
import { spawnSelf } from "../../cli/local_cluster.ts";
import { Hosts, hostsUnavailable } from "../../testing/hosts.ts";
import type { SpawnProcess } from "./cluster.ts";

/** How a benchmark starts its processes and reaches what they announce. */
export interface Placement extends AsyncDisposable {
  /** Starts one process of the cluster. */
  spawn: SpawnProcess;
  /** The URL (or HOST:PORT) by which this process reaches one a process announced. */
  reach(url: string): Promise<string>;
  /** Where the processes run, for the results. */
  label: string;
}

/** Every process on this host, on loopback. */
export function loopbackPlacement(): Placement {
  return {
    spawn: spawnSelf,
    reach: (url) => Promise.resolve(url),
    label: "on loopback",
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

/**
 * Each process on a test host of its own, bound to its address (`--insecure`: the hosts' bridge is reachable from
 * nowhere else), at most `counts` of each role; this process reaches them from a client host.
 */
export async function hostsPlacement(counts: Record<string, number>): Promise<Placement> {
  const why = await hostsUnavailable();
  if (why) throw new Error(`test hosts cannot be made here: ${why}`);
  const names = Object.entries(counts).flatMap(([role, n]) => Array.from({ length: n }, (_, i) => `${role}${i + 1}`));
  const hosts = await Hosts.create([...names, "client"]);
  const used = new Map<string, number>();
  const spawn: SpawnProcess = (role, flags, env, log) => {
    const n = (used.get(role) ?? 0) + 1;
    used.set(role, n);
    const h = hosts.get(`${role}${n}`);
    return spawnSelf(role, [...flags, `--host=${h.address}`, "--insecure"], env, log, hosts.wrap(h));
  };
  return {
    spawn,
    reach: (url) => hosts.forward(hosts.get("client"), url),
    label: "each on a test host of its own (a network namespace on one bridge)",
    [Symbol.asyncDispose]: () => hosts[Symbol.asyncDispose](),
  };
}
