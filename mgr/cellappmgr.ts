import { type Channel, Handlers, MgrMsg, ProcMsg, WireServer } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import { VERSION } from "../core/version.ts";
import type { ClusterView, HealthView, ShutdownView } from "../core/views.ts";
import { type Member, Registry } from "./registry.ts";

/** How a cellappmgr is started. */
export interface CellAppMgrOptions {
  host: string;
  port: number;
  secret: string | null;
  maxFrame: number;
  log: Logger;
  /** Channel heartbeat period and silence after which a process is dropped. */
  heartbeatMs?: number;
  deadAfterMs?: number;
}

/** How long a process gets to stop on request before the cellappmgr moves on. */
const STOP_TIMEOUT_MS = 15_000;

/**
 * The control plane: knows every cellapp and baseapp, and (in later parts)
 * every space and its cells. It implements what the admin API needs.
 */
export class CellAppMgr {
  readonly registry: Registry;
  readonly server: WireServer;
  readonly startedAt: number = Date.now();
  /** Resolves when a cluster shutdown has stopped every other process. */
  readonly shutdownDone: Promise<void>;
  #log: Logger;
  #shuttingDown = false;
  #resolveShutdown!: () => void;

  constructor(opts: CellAppMgrOptions) {
    this.#log = opts.log;
    this.registry = new Registry(opts.log);
    this.shutdownDone = new Promise((r) => (this.#resolveShutdown = r));
    const handlers = new Handlers().on(MgrMsg.register, (ch, info) => {
      if (this.#shuttingDown) throw new Error("the cluster is shutting down");
      const m = this.registry.register(ch, info);
      return { id: m.id, mgrPid: Deno.pid };
    });
    this.server = new WireServer({
      host: opts.host,
      port: opts.port,
      role: "cellappmgr",
      secret: opts.secret,
      maxFrame: opts.maxFrame,
      heartbeatMs: opts.heartbeatMs ?? 500,
      deadAfterMs: opts.deadAfterMs ?? 2000,
      handlers,
      log: opts.log,
    });
  }

  /** The address processes connect to. */
  get address(): string {
    return this.server.address;
  }

  /** GET /api/health. */
  health(): HealthView {
    return { ok: true, role: "cellappmgr", version: VERSION };
  }

  /** GET /api/cluster: this process first, then every registered one. */
  cluster(): ClusterView {
    const self = {
      id: 0,
      role: "cellappmgr" as const,
      pid: Deno.pid,
      address: this.address,
      uptimeS: Math.round((Date.now() - this.startedAt) / 100) / 10,
      lastHeartbeatMsAgo: 0,
      load: 0,
    };
    return { processes: [self, ...this.registry.views()] };
  }

  /**
   * POST /api/shutdown: stops baseapps first (they persist their entities),
   * then cellapps; `shutdownDone` resolves when all are gone. Repeated calls
   * join the shutdown already running.
   */
  shutdownCluster(): ShutdownView {
    const count = this.registry.members.size;
    if (!this.#shuttingDown) {
      this.#shuttingDown = true;
      this.#log.info(`cluster shutdown requested: stopping ${count} processes`);
      this.#stopAll().finally(() => this.#resolveShutdown());
    }
    return { stopping: true, processes: count };
  }

  async #stopAll(): Promise<void> {
    for (const role of ["baseapp", "cellapp"] as const) {
      const members = this.registry.withRole(role);
      await Promise.all(members.map((m) => this.#stopMember(m)));
    }
    this.#log.info("every process has stopped");
  }

  async #stopMember(m: Member): Promise<void> {
    const ch: Channel = m.channel;
    try {
      await ch.requestWithin(STOP_TIMEOUT_MS, ProcMsg.stop, "cluster shutdown");
    } catch (e) {
      this.#log.warn(
        `${m.role} ${m.id} did not acknowledge stop: ${(e as Error).message}`,
      );
    }
    const gone = await Promise.race([
      ch.closed.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), STOP_TIMEOUT_MS)),
    ]);
    if (!gone) {
      this.#log.warn(
        `${m.role} ${m.id} (pid ${m.pid}) still connected after stop`,
      );
    }
  }

  /** Stops serving: closes every channel and the listener. */
  close(): void {
    this.server.close("cellappmgr stopping");
  }
}
