/**
 * The faults of the chaos scene on test hosts (`deno task bench chaos --hosts`): network faults between the hosts of
 * a HostsCluster (a link down, routes blackholed both ways or one way), the cellappmgr stopped, and processes killed
 * and started again. Each is delivered by `deliver` and undone by the `heal` it returns.
 */
import type { ClusterView } from "../../core/views.ts";
import type { Host } from "../../testing/hosts.ts";
import type { HostsCluster } from "../../testing/hosts_cluster.ts";
import type { Proc } from "../../testing/procs.ts";

/** The kinds of fault of the hosts scene. */
export const HOST_FAULT_KINDS = [
  "cut-cellapp",
  "cellapp-from-mgr",
  "baseapp-from-mgr",
  "cellapp-one-way",
  "cellapps-apart",
  "stop-cellappmgr",
  "kill-cellapp",
  "kill-baseapp",
  "kill-cellappmgr",
  "stop-cellapp",
] as const;

/** One kind of fault of the hosts scene. */
export type HostFaultKind = typeof HOST_FAULT_KINDS[number];

/** What each kind does, for the results. */
export const HOST_FAULT_TEXT: Record<HostFaultKind, string> = {
  "cut-cellapp": "a cellapp's link down",
  "cellapp-from-mgr": "a cellapp and the cellappmgr blocked both ways",
  "baseapp-from-mgr": "a baseapp and the cellappmgr blocked both ways",
  "cellapp-one-way": "a cellapp cannot send to another (receives from it)",
  "cellapps-apart": "two cellapps blocked both ways",
  "stop-cellappmgr": "the cellappmgr stopped (SIGSTOP)",
  "kill-cellapp": "a cellapp killed -9, started again at the heal",
  "kill-baseapp": "a baseapp killed -9, started again at the heal",
  "kill-cellappmgr": "the cellappmgr killed -9, started again at the heal",
  "stop-cellapp": "a cellapp stopped (SIGSTOP)",
};

/** A fault in place. */
export interface Delivered {
  /** Which host(s) or process. */
  target: string;
  /** Undoes it (heals the link, continues or restarts the process). */
  heal: () => Promise<void>;
  /** A process killed -9: its pid and the wall-clock ms of the kill (for the history checker). */
  killed?: { pid: number; at: number };
}

/** What a fault is chosen from: the cluster, its latest view, and which cellapps hold reals. */
export interface FaultContext {
  cluster: HostsCluster;
  view: ClusterView | null;
  /** Reals per cellapp member id, from the latest poll. */
  realsOn: Map<number, number>;
  random: () => number;
}

const wall = () => performance.timeOrigin + performance.now();

/** The cellapps that hold reals now (all of them when none do, or with `all`), most loaded first. */
function loadedCellapps(ctx: FaultContext, all_ = false): { proc: Proc; host: Host; id: number | null }[] {
  const { cluster, view, realsOn } = ctx;
  const all = cluster.cellapps.map((proc, i) => ({
    proc,
    host: cluster.hosts.get(`cell${i + 1}`),
    id: view?.processes.find((p) => p.pid === proc.pid)?.id ?? null,
    reals: 0,
  }));
  for (const c of all) c.reals = c.id === null ? 0 : realsOn.get(c.id) ?? 0;
  const loaded = all.filter((c) => c.reals > 0);
  return (loaded.length > 0 && !all_ ? loaded : all).sort((a, b) => b.reals - a.reals);
}

function pick<T>(list: T[], random: () => number): T {
  return list[Math.floor(random() * list.length)];
}

const name = (c: { host: Host; id: number | null }) => `${c.host.name}${c.id === null ? "" : ` (id ${c.id})`}`;

/** Blocks `a` and `b` from each other (both ways); returns the heal. */
async function blockBoth(cluster: HostsCluster, a: Host, b: Host): Promise<() => Promise<void>> {
  await cluster.hosts.block(a, b);
  await cluster.hosts.block(b, a);
  return async () => {
    await cluster.hosts.unblock(a, b);
    await cluster.hosts.unblock(b, a);
  };
}

/** Delivers a fault of `kind`; the returned `heal` undoes it. */
export async function deliver(kind: HostFaultKind, ctx: FaultContext): Promise<Delivered> {
  const { cluster, random } = ctx;
  const { hosts } = cluster;
  const mgrHost = hosts.get("mgr");
  switch (kind) {
    case "cut-cellapp": {
      const c = pick(loadedCellapps(ctx), random);
      await hosts.cut(c.host);
      return { target: name(c), heal: () => hosts.heal(c.host) };
    }
    case "cellapp-from-mgr": {
      const c = pick(loadedCellapps(ctx), random);
      return { target: `${name(c)} / mgr`, heal: await blockBoth(cluster, c.host, mgrHost) };
    }
    case "baseapp-from-mgr": {
      const i = Math.floor(random() * cluster.baseapps.length);
      return { target: `base${i + 1} / mgr`, heal: await blockBoth(cluster, hosts.get(`base${i + 1}`), mgrHost) };
    }
    case "cellapp-one-way":
    case "cellapps-apart": {
      // The two holding the most reals (the second may hold none after earlier faults emptied it).
      const [a, b] = loadedCellapps(ctx, true);
      if (kind === "cellapps-apart") {
        return { target: `${name(a)} / ${name(b)}`, heal: await blockBoth(cluster, a.host, b.host) };
      }
      await hosts.block(a.host, b.host);
      return { target: `${name(a)} -/-> ${name(b)}`, heal: () => hosts.unblock(a.host, b.host) };
    }
    case "stop-cellappmgr":
    case "stop-cellapp": {
      const target = kind === "stop-cellappmgr" ? { proc: cluster.mgr, text: `mgr (pid ${cluster.mgr.pid})` } : (() => {
        const c = pick(loadedCellapps(ctx), random);
        return { proc: c.proc, text: `${name(c)} pid ${c.proc.pid}` };
      })();
      target.proc.kill("SIGSTOP");
      return {
        target: target.text,
        heal: () => Promise.resolve(target.proc.kill("SIGCONT")),
      };
    }
    case "kill-cellapp":
    case "kill-baseapp":
    case "kill-cellappmgr": {
      let proc: Proc, text: string;
      if (kind === "kill-cellappmgr") {
        proc = cluster.mgr;
        text = `mgr (pid ${proc.pid})`;
      } else if (kind === "kill-cellapp") {
        const c = pick(loadedCellapps(ctx), random);
        proc = c.proc;
        text = `${name(c)} pid ${proc.pid}`;
      } else {
        const i = Math.floor(random() * cluster.baseapps.length);
        proc = cluster.baseapps[i];
        text = `base${i + 1} pid ${proc.pid}`;
      }
      proc.kill("SIGKILL");
      const at = wall();
      await proc.status;
      return { target: text, killed: { pid: proc.pid, at }, heal: () => cluster.restart(proc).then(() => {}) };
    }
  }
}
