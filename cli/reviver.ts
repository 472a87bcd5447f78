/**
 * The local cluster's reviver (BigWorld's): a child that dies unexpectedly is
 * started again with the same flags after a back-off, so that a one-machine
 * deployment heals by itself. A child that exits with status 0 stopped on
 * request (POST /api/shutdown) and is not restarted, nor is any child while
 * the cluster is stopping or once the cellappmgr has announced a cluster
 * shutdown (cli/local_cluster.ts).
 */
import { errorText } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";

/** What the reviver watches of a child process. */
export interface Revivable {
  role: string;
  pid: number;
  ready: Promise<unknown>;
  status: Promise<Deno.CommandStatus>;
}

/** Back-off between restarts of one child: the first wait, the longest, and how long up counts as healthy again. */
export interface ReviveOptions {
  firstDelayMs: number;
  maxDelayMs: number;
  /** A child that stayed up this long starts again from `firstDelayMs` when it next dies. */
  healthyAfterMs: number;
}

/** 0.5 s doubling to 10 s, reset after a minute up. */
export const REVIVE_DEFAULTS: ReviveOptions = { firstDelayMs: 500, maxDelayMs: 10_000, healthyAfterMs: 60_000 };

/** How a child ended, for the log. */
export function describeExit(s: Deno.CommandStatus): string {
  return s.signal ? `killed by ${s.signal}` : `exit status ${s.code}`;
}

/**
 * Watches the child in `slot.current` and restarts it (through `respawn`)
 * each time it dies unexpectedly, logging the role, pid, how it ended and the
 * delay. Resolves with the status of the child's last exit: a clean one, or
 * any once `stopping()` says the cluster is stopping.
 */
export async function revive<C extends Revivable>(
  slot: { current: C },
  respawn: () => C,
  stopping: () => boolean,
  log: Logger,
  opts: ReviveOptions = REVIVE_DEFAULTS,
): Promise<Deno.CommandStatus> {
  let delay = opts.firstDelayMs;
  for (;;) {
    const child = slot.current;
    const startedAt = performance.now();
    const status = await child.status;
    if (stopping() || status.success) return status;
    if (performance.now() - startedAt >= opts.healthyAfterMs) delay = opts.firstDelayMs;
    log.error(`${child.role} pid ${child.pid} died (${describeExit(status)}); restarting it in ${delay} ms`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, opts.maxDelayMs);
    if (stopping()) return status;
    slot.current = respawn();
    log.info(`${child.role} restarted: pid ${slot.current.pid} replaces pid ${child.pid}`);
    // Its ready line is read (and its output passed on); a child that dies before it is caught by the status above.
    slot.current.ready.catch((e) => log.warn(`restarted ${child.role} pid ${slot.current.pid}: ${errorText(e)}`));
  }
}
