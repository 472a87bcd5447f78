/**
 * An operator's control of processes: a graceful shutdown of one (a cellapp
 * first hands its cells to the others) or a forced one (the process exits at
 * once and fault tolerance brings back what it held), and the stop of the
 * whole cluster.
 */
import { errorText } from "../core/errors.ts";
import { CellMsg, ProcMsg } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import { type EntityInspectView, type EntityView, type ProcessShutdownView, RequestError } from "../core/views.ts";
import type { Member, Registry } from "./registry.ts";
import type { Balancer } from "./balance/balancer.ts";

/** How long a retiring cellapp gets to hand its cells over before it is stopped anyway. */
const DRAIN_TIMEOUT_MS = 60_000;
/** How long a process gets to acknowledge a stop. */
const STOP_TIMEOUT_MS = 15_000;
/** How long an admin query of a cellapp may take. */
const QUERY_TIMEOUT_MS = 5_000;

/** What shutting down one process needs of the cellappmgr. */
export interface ControlHost {
  registry: Registry;
  balancer: Balancer;
  log: Logger;
  /** Starts draining a cellapp (POST /api/cellapps/:id/retire); throws a RequestError when it cannot be. */
  retire(id: number): number;
}

/**
 * POST /api/processes/:id/shutdown: stops one cellapp or baseapp. Gracefully,
 * a baseapp saves its players and disconnects them with the reason, and a
 * cellapp retires first (its cells shrink to nothing, their entities move
 * out) and is stopped once it runs no cell. With `force` it exits at once.
 */
export function shutdownProcess(host: ControlHost, id: number, force: boolean): ProcessShutdownView {
  const m = host.registry.members.get(id);
  if (!m) {
    throw new RequestError(
      "not_found",
      id === 0
        ? "process 0 is the cellappmgr itself; POST /api/shutdown stops the whole cluster"
        : `no process ${id}; GET /api/cluster lists them`,
    );
  }
  const reason = `asked through the admin API${force ? " (forced)" : ""}`;
  if (force) {
    host.log.warn(`${m.role} ${m.id} (pid ${m.pid}) is stopped at once: ${reason}`);
    m.channel.send(ProcMsg.exitNow, reason);
    return { id, role: m.role, stopping: true, force, retiringCells: 0 };
  }
  let cells = 0;
  if (m.role === "cellapp") {
    try {
      cells = host.retire(id);
    } catch (e) {
      if (!(e instanceof RequestError) || e.code !== "conflict") throw e;
      throw new RequestError("conflict", `${e.message}; ?force=true stops it anyway`, { cause: e });
    }
  }
  host.log.info(`${m.role} ${m.id} (pid ${m.pid}) is stopping: ${reason}`);
  void stopWhenDrained(host, m, reason);
  return { id, role: m.role, stopping: true, force, retiringCells: cells };
}

async function stopWhenDrained(host: ControlHost, m: Member, reason: string): Promise<void> {
  if (m.role === "cellapp") {
    const until = performance.now() + DRAIN_TIMEOUT_MS;
    while (host.balancer.cellsOn(m.id) > 0 && m.channel.isOpen) {
      if (performance.now() > until) {
        host.log.warn(
          `cellapp ${m.id} still runs ${host.balancer.cellsOn(m.id)} cells after ${DRAIN_TIMEOUT_MS} ms of ` +
            `retiring; stopping it anyway (fault tolerance brings back what it held)`,
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  if (!m.channel.isOpen) return;
  try {
    await m.channel.requestWithin(STOP_TIMEOUT_MS, ProcMsg.stop, reason);
  } catch (e) {
    host.log.warn(`${m.role} ${m.id} did not acknowledge stop: ${errorText(e)}`);
  }
}

/** POST /api/shutdown: stops every baseapp (they persist their entities), then every cellapp. */
export async function stopCluster(registry: Registry, log: Logger): Promise<void> {
  for (const role of ["baseapp", "cellapp"] as const) {
    await Promise.all(registry.withRole(role).map((m) => stopMember(m, log)));
  }
  log.info("every process has stopped");
}

async function stopMember(m: Member, log: Logger): Promise<void> {
  try {
    await m.channel.requestWithin(STOP_TIMEOUT_MS, ProcMsg.stop, "cluster shutdown");
  } catch (e) {
    log.warn(`${m.role} ${m.id} did not acknowledge stop: ${errorText(e)}`);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gone = await Promise.race([
    m.channel.closed.then(() => true),
    new Promise<false>((r) => (timer = setTimeout(() => r(false), STOP_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  if (!gone) log.warn(`${m.role} ${m.id} (pid ${m.pid}) still connected after stop`);
}

/** An entity and its cell properties: where it is (findEntity), then its real's cellapp asked for the properties. */
export async function inspectEntity(
  registry: Registry,
  find: (id: number) => Promise<EntityView>,
  id: number,
): Promise<EntityInspectView> {
  const where = await find(id);
  const m = registry.members.get(where.cellapp);
  const properties = m ? await m.channel.requestWithin(QUERY_TIMEOUT_MS, CellMsg.entityProperties, id) : null;
  // It moved to another cellapp between the two questions: the next look finds it there.
  if (properties === null) throw new RequestError("conflict", `entity ${id} moved while it was being read`);
  return { ...where, properties };
}
