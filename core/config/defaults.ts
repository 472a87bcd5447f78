/** The defaults for every setting left unset, and the values derived from others. */
import type { LogFormat, LogLevel } from "../log.ts";
import type { SocketKind } from "../net/mod.ts";
// Not through wire/mod.ts: the wire catalog imports space_settings.ts, which imports this folder.
import { DEFAULT_MAX_FRAME } from "../wire/frame.ts";
import { type Config, ConfigError, DEFAULT_MGR_PORT, type ServerRole } from "./config.ts";
import { AOI_HYSTERESIS, OFFLOAD_HYSTERESIS } from "./hysteresis.ts";

/**
 * Builds the Config from the parsed values given, filling in defaults (some depend on the role) and the derived
 * move rate and ghost radius. Throws ConfigError for a ghost radius too small for the AoI radius.
 */
export function withDefaults(got: Partial<Record<keyof Config, unknown>>): Config {
  const role = (got.role as ServerRole | undefined) ?? null;
  const config: Config = {
    role,
    mgr: (got.mgr as string) ?? `127.0.0.1:${DEFAULT_MGR_PORT}`,
    host: (got.host as string) ?? "127.0.0.1",
    port: (got.port as number) ??
      (role === null || role === "cellappmgr" ? DEFAULT_MGR_PORT : 0),
    adminPort: (got.adminPort as number) ?? 8080,
    kv: (got.kv as string) ?? "data/seamless.kv",
    db: (got.db as string) ?? null,
    secret: (got.secret as string) ?? null,
    adminToken: (got.adminToken as string) ?? null,
    logLevel: (got.logLevel as LogLevel) ?? "info",
    logFormat: (got.logFormat as LogFormat) ?? "text",
    maxFrame: (got.maxFrame as number) ?? DEFAULT_MAX_FRAME,
    cellapps: (got.cellapps as number) ?? 2,
    baseapps: (got.baseapps as number) ?? 1,
    npcs: (got.npcs as number) ?? (role === null ? 300 : 0),
    tickHz: (got.tickHz as number) ?? 10,
    clientPort: (got.clientPort as number) ?? 0,
    publicHost: (got.publicHost as string) ?? null,
    autoAccounts: (got.autoAccounts as boolean) ?? true,
    maxSpeed: (got.maxSpeed as number) ?? 10,
    aoiRadius: (got.aoiRadius as number) ?? 500,
    ghostRadius: 0,
    restoreTimeoutMs: (got.restoreTimeoutMs as number) ?? 5000,
    balancePeriodMs: (got.balancePeriodMs as number) ?? 1000,
    minCellWidth: (got.minCellWidth as number) ?? 10,
    balanceAddAbove: (got.balanceAddAbove as number) ?? 0.8,
    balanceRetireBelow: (got.balanceRetireBelow as number) ?? 0.2,
    insecure: (got.insecure as boolean) ?? false,
    adminOrigins: (got.adminOrigins as string[]) ?? [],
    adminHosts: (got.adminHosts as string[]) ?? [],
    spawnLimit: (got.spawnLimit as number) ?? 10_000,
    entityLimit: (got.entityLimit as number) ?? 100_000,
    abuseLimit: (got.abuseLimit as number) ?? 10,
    moveRate: (got.moveRate as number) ?? 0,
    headerTimeoutMs: (got.headerTimeoutMs as number) ?? 10_000,
    clientSockets: (got.clientSockets as SocketKind) ?? "epoll",
    loginRate: (got.loginRate as number) ?? 5,
    clientSpawn: (got.clientSpawn as boolean) ?? false,
    autosaveSec: (got.autosaveSec as number) ?? 10,
    orphanTimeoutSec: (got.orphanTimeoutSec as number) ?? 60,
    mgrLeaseMs: (got.mgrLeaseMs as number) ?? null,
    game: (got.game as string) ?? null,
    watch: (got.watch as boolean) ?? false,
    historyDir: (got.historyDir as string) ?? null,
    tlsCert: (got.tlsCert as string) ?? null,
    tlsKey: (got.tlsKey as string) ?? null,
    tlsCa: (got.tlsCa as string) ?? null,
    clientUrl: (got.clientUrl as string) ?? null,
    tls: null,
  };
  config.moveRate ||= config.tickHz;
  const minGhost = config.aoiRadius + AOI_HYSTERESIS + OFFLOAD_HYSTERESIS;
  config.ghostRadius = (got.ghostRadius as number) ?? minGhost;
  if (config.ghostRadius < minGhost) {
    throw new ConfigError(
      `--ghost-radius: ${config.ghostRadius} m is less than the AoI radius (${config.aoiRadius} m) plus its hysteresis ` +
        `(${AOI_HYSTERESIS} m) plus the offload hysteresis (${OFFLOAD_HYSTERESIS} m): a witness near a border would ` +
        `miss entities of the neighbour cell; use at least ${minGhost}`,
    );
  }
  if (!(config.balanceRetireBelow < config.balanceAddAbove)) {
    throw new ConfigError(
      `--idle-load (${config.balanceRetireBelow}) must be less than --busy-load ` +
        `(${config.balanceAddAbove}): a space would add and retire cells by turns`,
    );
  }
  return config;
}
