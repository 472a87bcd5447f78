/** Starts one role in this process: the glue between config, roles and the admin API. */
import { errorText } from "../core/errors.ts";
import { type Config, isLoopbackHost, wireTls } from "../core/config/mod.ts";
import { createLogger, type Logger } from "../core/log.ts";
import { announceReady, announceShutdown, onStopSignal, watchParent } from "../core/process.ts";
import { formatAddress } from "../core/wire/mod.ts";
import { openDb, redactUrl } from "../core/db/mod.ts";
import { clientPlacement, serverPlacement } from "../core/placement.ts";
import type { Game } from "../core/game.ts";
import type { BaseScripts } from "../base/mod.ts";
import { traceFromEnv } from "../core/trace.ts";
import { history } from "../core/history.ts";
import { GameReloader, type VersionedGame } from "../core/game_reload.ts";
import type { MemberProcess } from "../core/member_process.ts";
import { ProcMsg } from "../core/wire/mod.ts";
import { GameSource } from "./game_source.ts";

// Each role imports only its own part (cell/, base/, mgr/ with admin/) when it starts, not the others': every
// module a process loads stays resident (a cellapp holding the baseapp's and the admin API's code wastes ~14 MB).

/** A failure to start that names the flag to change. */
export class StartError extends Error {
  override name = "StartError";
}

/** Runs `cfg.role` with `game` until it is told to stop; never returns normally. */
export async function runRole(cfg: Config, game: Game): Promise<void> {
  const registry = game.registry;
  const role = cfg.role!;
  // JSON lines carry the process's id in the cluster once it has registered (the cellappmgr is 0).
  let member: { link: { id: number | null } } | null = null;
  const log = createLogger(`${role}[${Deno.pid}]`, cfg.logLevel, {
    format: cfg.logFormat,
    role,
    processId: () => role === "cellappmgr" ? 0 : member?.link.id ?? null,
  });
  if (cfg.secret === null) {
    log.warn("no --secret: any process that reaches this one's ports can join the cluster (fine on a dev machine)");
  }
  warnCleartext(cfg, log);
  log.info(`running game ${game.name}${cfg.game ? ` from ${cfg.game}` : ""}`);
  traceFromEnv(role); // only benchmarks set SEAMLESS_TRACE_DIR
  if (cfg.historyDir !== null && role !== "cellappmgr") history.open(cfg.historyDir, role);
  const source = new GameSource(cfg.game);
  const loaded = { game, version: await source.version() };
  // Each role swaps a reloaded game into what it runs (docs/game.md#reloading-a-game); `swap` is set once it runs.
  let swap: (next: VersionedGame) => void = () => {};
  const reloader = new GameReloader(loaded, () => source.load(), (next) => swap(next));
  if (role === "cellappmgr") return await runMgr(cfg, log, game, reloader, (s) => swap = s);
  if (role === "cellapp") {
    const { CellApp } = await import("../cell/mod.ts");
    const app = bind(
      "--port",
      cfg,
      () => new CellApp(cfg, log, { registry, scripts: game.cellScripts ?? {} }, cfg.tickHz),
    );
    member = app.member;
    swap = ({ game: next }) => app.swapGame({ registry: next.registry, scripts: next.cellScripts ?? {} });
    serveReloads(app.member, reloader, log);
    announceReady({ role, pid: Deno.pid, address: app.member.server.address, mgr: cfg.mgr });
    return stopOn(app.member.stopRequested, (why) => app.close(why), log);
  }
  const { BaseApp } = await import("../base/mod.ts");
  const app = await bind("--port", cfg, () =>
    BaseApp.start(cfg, log, {
      registry,
      clientPort: cfg.clientPort,
      autoCreateAccounts: cfg.autoAccounts,
      maxSpeed: cfg.maxSpeed,
      moveRate: cfg.moveRate,
      limits: { abuseLimit: cfg.abuseLimit },
      loginLimits: { addressRefillPerSec: cfg.loginRate, addressBurst: 4 * cfg.loginRate },
      placement: cfg.clientSpawn ? clientPlacement : game.placement ?? serverPlacement,
      checkLogin: game.checkLogin ?? null,
      ...(game.playerType ? { playerType: game.playerType } : {}),
      baseScripts: (game.baseScripts ?? {}) as BaseScripts,
      autosaveSec: cfg.autosaveSec,
    }));
  member = app.member;
  swap = (next) =>
    app.swapGame(next.game.registry, (next.game.baseScripts ?? {}) as BaseScripts, next.version, {
      checkLogin: next.game.checkLogin ?? null,
      placement: cfg.clientSpawn ? clientPlacement : next.game.placement ?? serverPlacement,
    });
  serveReloads(app.member, reloader, log);
  // The database it uses: its Deno KV, or its PostgreSQL URL without the password.
  const db = cfg.db !== null ? { db: redactUrl(cfg.db) } : { kv: cfg.kv };
  announceReady({
    role,
    pid: Deno.pid,
    address: app.member.server.address,
    mgr: cfg.mgr,
    ...db,
    clientUrl: app.clientUrl,
  });
  return stopOn(app.member.stopRequested, (why) => app.close(why), log);
}

/** A member process takes the cellappmgr's reload steps (ProcMsg.reloadGame) and reports its game version. */
function serveReloads(member: MemberProcess, reloader: GameReloader, log: Logger): void {
  member.link.game = reloader.view;
  member.handlers.on(ProcMsg.reloadGame, async (_ch, step, n) => {
    const view = await reloader.step(step, n);
    if (step === "commit") log.info(`game reload ${n}: now running game version ${view.version}`);
    return view;
  });
}

async function runMgr(
  cfg: Config,
  log: Logger,
  game: Game,
  reloader: GameReloader,
  onSwap: (swap: (next: VersionedGame) => void) => void,
): Promise<void> {
  const registry = game.registry;
  const [{ CellAppMgr }, { createAdminApp, serveAdmin }] = await Promise.all([
    import("../mgr/mod.ts"),
    import("../admin/mod.ts"),
  ]);
  const kv = await openDb(cfg, { log });
  const mgr = await bind("--port", cfg, () =>
    CellAppMgr.start({
      ...cfg,
      tls: wireTls(cfg.tls),
      log,
      kv,
      registry,
      defaultSpace: { bounds: { minX: -500, minZ: -500, maxX: 500, maxZ: 500 }, npcs: cfg.npcs },
      spaceCreated: game.spaceCreated,
      game: reloader,
      spaceGeometry: game.spaceGeometry,
    }));
  onSwap((next) => mgr.swapGame(next.game));
  const app = (() => {
    try {
      return createAdminApp(mgr, {
        token: cfg.adminToken,
        entityTypes: () => registry.types.filter((t) => t.hasCell).map((t) => t.name),
        origins: cfg.adminOrigins,
        hosts: cfg.adminHosts,
        boundHost: cfg.host,
      });
    } catch (e) {
      throw new StartError(errorText(e), { cause: e });
    }
  })();
  const http = await bind(
    "--admin-port",
    { ...cfg, port: cfg.adminPort },
    () =>
      serveAdmin(app.fetch, {
        hostname: cfg.host,
        port: cfg.adminPort,
        headerTimeoutMs: cfg.headerTimeoutMs,
        tls: cfg.tls,
        onTlsError: (remote, e) => log.debug(`admin API: TLS handshake with ${remote} failed: ${e.message}`),
      }),
  );
  const admin = `${cfg.tls ? "https" : "http"}://${formatAddress(http.hostname, http.port)}`;
  log.info(`listening for processes on ${mgr.address}; admin API at ${admin}`);
  announceReady({
    role: "cellappmgr",
    pid: Deno.pid,
    address: mgr.address,
    admin,
  });
  const stop = async (why: string) => {
    log.info(`stopping: ${why}`);
    mgr.close();
    await http.close();
    await kv.close();
    Deno.exit(0);
  };
  onStopSignal(stop);
  watchParent(stop);
  mgr.shutdownBegun.then(() => announceShutdown({ pid: Deno.pid }));
  await mgr.shutdownDone;
  await stop("cluster shutdown complete");
}

function stopOn(
  requested: Promise<string>,
  close: (why: string) => Promise<void>,
  log: Logger,
): Promise<void> {
  const stop = async (why: string) => {
    log.info(`stopping: ${why}`);
    await close(why);
    Deno.exit(0);
  };
  onStopSignal(stop);
  watchParent(stop);
  return requested.then(stop);
}

/** Runs a start step that binds a port, turning "address in use" into an error naming the flag. */
function bind<T>(flag: string, cfg: Config, start: () => T): T {
  const explain = (e: unknown): unknown => {
    if (e instanceof Deno.errors.AddrInUse) {
      return new StartError(
        `${flag}: ${cfg.host}:${cfg.port} is already in use; choose another port (0 picks a free one)`,
        { cause: e },
      );
    }
    if (e instanceof Deno.errors.AddrNotAvailable) {
      return new StartError(
        `--host: ${cfg.host} is not an address of this machine`,
        { cause: e },
      );
    }
    return e;
  };
  try {
    const r = start();
    if (r instanceof Promise) {
      return r.catch((e) => {
        throw explain(e);
      }) as T;
    }
    return r;
  } catch (e) {
    throw explain(e);
  }
}

/**
 * Warns once when what this role serves outside the cluster travels in clear to other machines: the baseapp's
 * clients' passwords and the cellappmgr's admin token.
 */
function warnCleartext(cfg: Config, log: Logger): void {
  if (isLoopbackHost(cfg.host)) return;
  const fix = "set --tls-cert and --tls-key, or serve it only through a TLS-terminating proxy";
  if (cfg.role === "baseapp" && cfg.tls === null) {
    log.warn(`--host=${cfg.host} without TLS: clients' passwords travel in clear over ws://; ${fix}`);
  }
  if (cfg.role === "cellappmgr" && cfg.tls === null) {
    log.warn(`--host=${cfg.host} without TLS: the admin token travels in clear over http://; ${fix}`);
  }
}
