/**
 * The table of settings: each flag's environment variable and value parser, and the Config key it sets.
 */
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "../log.ts";
import { parseAddress } from "../wire/endpoint.ts";
import { SOCKET_KINDS, type SocketKind } from "../net/mod.ts";
import type { Config, ServerRole } from "./config.ts";
import { bool, clientUrl, decimal, hostName, integer, list, origin, postgresUrl, text } from "./values.ts";

const ROLE_ALIASES: Record<string, ServerRole> = {
  cellappmgr: "cellappmgr",
  mgr: "cellappmgr",
  cellapp: "cellapp",
  cell: "cellapp",
  baseapp: "baseapp",
  base: "baseapp",
};

/** How one flag is read: its environment variable, its parser, and whether it is a switch. */
export interface Spec {
  /** Parses the raw text (or JSON value from a config file); throws a reason. */
  parse(v: unknown): unknown;
  env: string;
  /** A switch: `--name` alone means true. */
  flag?: boolean;
}

/** Every flag (without its leading --) and how it is read. */
export const SPECS: Record<string, Spec> = {
  role: {
    env: "SEAMLESS_ROLE",
    parse: (v) => {
      const r = ROLE_ALIASES[text(v)];
      if (!r) {
        throw new Error(
          `unknown role ${JSON.stringify(v)}; expected cellappmgr (mgr), cellapp (cell) or baseapp (base)`,
        );
      }
      return r;
    },
  },
  mgr: {
    env: "SEAMLESS_MGR",
    parse: (v) => {
      const a = parseAddress(text(v));
      if (a.port === 0) {
        throw new Error(
          `"${v}" has port 0; the cellappmgr's real port is needed`,
        );
      }
      return text(v);
    },
  },
  host: { env: "SEAMLESS_HOST", parse: text },
  port: { env: "SEAMLESS_PORT", parse: integer(0, 65535, "a port number") },
  "admin-port": {
    env: "SEAMLESS_ADMIN_PORT",
    parse: integer(0, 65535, "a port number"),
  },
  kv: { env: "SEAMLESS_KV", parse: text },
  db: { env: "SEAMLESS_DB", parse: postgresUrl },
  secret: { env: "SEAMLESS_SECRET", parse: text },
  "admin-token": { env: "SEAMLESS_ADMIN_TOKEN", parse: text },
  "log-level": {
    env: "SEAMLESS_LOG_LEVEL",
    parse: (v) => {
      if (!LOG_LEVELS.includes(v as LogLevel)) {
        throw new Error(
          `${JSON.stringify(v)} is not a log level; expected ${LOG_LEVELS.join(", ")}`,
        );
      }
      return v;
    },
  },
  "log-format": {
    env: "SEAMLESS_LOG_FORMAT",
    parse: (v) => {
      if (!LOG_FORMATS.includes(v as LogFormat)) {
        throw new Error(`${JSON.stringify(v)} is not a log format; expected ${LOG_FORMATS.join(" or ")}`);
      }
      return v;
    },
  },
  "max-frame": {
    env: "SEAMLESS_MAX_FRAME",
    parse: integer(1024, 2 ** 31 - 1, "a frame size in bytes"),
  },
  cellapps: {
    env: "SEAMLESS_CELLAPPS",
    parse: integer(0, 64, "a number of cellapps"),
  },
  baseapps: {
    env: "SEAMLESS_BASEAPPS",
    parse: integer(0, 64, "a number of baseapps"),
  },
  npcs: { env: "SEAMLESS_NPCS", parse: integer(0, 100_000, "a number of NPCs") },
  "tick-hz": { env: "SEAMLESS_TICK_HZ", parse: integer(1, 100, "a tick rate in Hz") },
  "client-port": { env: "SEAMLESS_CLIENT_PORT", parse: integer(0, 65535, "a port number") },
  "public-host": { env: "SEAMLESS_PUBLIC_HOST", parse: hostName },
  "auto-accounts": { env: "SEAMLESS_AUTO_ACCOUNTS", parse: bool },
  insecure: { env: "SEAMLESS_INSECURE", parse: bool, flag: true },
  "admin-origins": { env: "SEAMLESS_ADMIN_ORIGINS", parse: origin },
  "admin-hosts": { env: "SEAMLESS_ADMIN_HOSTS", parse: list },
  "spawn-limit": { env: "SEAMLESS_SPAWN_LIMIT", parse: integer(1, 1_000_000, "a number of entities") },
  "entity-limit": { env: "SEAMLESS_ENTITY_LIMIT", parse: integer(1, 10_000_000, "a number of entities") },
  "abuse-limit": { env: "SEAMLESS_ABUSE_LIMIT", parse: integer(1, 1_000_000_000, "an abuse score") },
  "move-rate": { env: "SEAMLESS_MOVE_RATE", parse: integer(1, 1000, "a number of moves per second") },
  "header-timeout": { env: "SEAMLESS_HEADER_TIMEOUT", parse: integer(100, 600_000, "a time in milliseconds") },
  "client-sockets": {
    env: "SEAMLESS_CLIENT_SOCKETS",
    parse: (v) => {
      if (!SOCKET_KINDS.includes(v as SocketKind)) {
        throw new Error(`${JSON.stringify(v)} is not a kind of socket; expected ${SOCKET_KINDS.join(" or ")}`);
      }
      return v;
    },
  },
  "login-rate": { env: "SEAMLESS_LOGIN_RATE", parse: integer(1, 100_000, "a number of logins per second") },
  "client-spawn": { env: "SEAMLESS_CLIENT_SPAWN", parse: bool, flag: true },
  autosave: { env: "SEAMLESS_AUTOSAVE", parse: integer(1, 86_400, "a period in seconds") },
  "orphan-timeout": { env: "SEAMLESS_ORPHAN_TIMEOUT", parse: integer(1, 86_400, "a time in seconds") },
  "mgr-lease": { env: "SEAMLESS_MGR_LEASE", parse: integer(0, 600_000, "a time in milliseconds (0: no lease)") },
  game: { env: "SEAMLESS_GAME", parse: text },
  watch: { env: "SEAMLESS_WATCH", parse: bool, flag: true },
  history: { env: "SEAMLESS_HISTORY", parse: text },
  "tls-cert": { env: "SEAMLESS_TLS_CERT", parse: text },
  "tls-key": { env: "SEAMLESS_TLS_KEY", parse: text },
  "tls-ca": { env: "SEAMLESS_TLS_CA", parse: text },
  "client-url": { env: "SEAMLESS_CLIENT_URL", parse: clientUrl },
  "aoi-radius": { env: "SEAMLESS_AOI_RADIUS", parse: integer(1, 100_000, "a radius in metres") },
  "ghost-radius": { env: "SEAMLESS_GHOST_RADIUS", parse: integer(1, 100_000, "a radius in metres") },
  "restore-timeout": { env: "SEAMLESS_RESTORE_TIMEOUT", parse: integer(100, 600_000, "a time in milliseconds") },
  "balance-period": { env: "SEAMLESS_BALANCE_PERIOD", parse: integer(0, 600_000, "a period in milliseconds") },
  "min-cell-width": { env: "SEAMLESS_MIN_CELL_WIDTH", parse: integer(1, 100_000, "a width in metres") },
  "busy-load": { env: "SEAMLESS_BUSY_LOAD", parse: decimal(0, 64, "a load in cores") },
  "idle-load": { env: "SEAMLESS_IDLE_LOAD", parse: decimal(0, 64, "a load in cores") },
  "max-speed": {
    env: "SEAMLESS_MAX_SPEED",
    parse: (v) => {
      const n = Number(v);
      if (!(n > 0 && n <= 1000)) throw new Error(`${JSON.stringify(v)} is not a speed in m/s (0-1000]`);
      return n;
    },
  },
};

/** The Config key each flag sets. */
export const KEY_OF: Record<string, keyof Config> = {
  role: "role",
  mgr: "mgr",
  host: "host",
  port: "port",
  "admin-port": "adminPort",
  kv: "kv",
  db: "db",
  secret: "secret",
  "admin-token": "adminToken",
  "log-level": "logLevel",
  "log-format": "logFormat",
  "max-frame": "maxFrame",
  cellapps: "cellapps",
  baseapps: "baseapps",
  npcs: "npcs",
  "tick-hz": "tickHz",
  "client-port": "clientPort",
  "public-host": "publicHost",
  "auto-accounts": "autoAccounts",
  "max-speed": "maxSpeed",
  "aoi-radius": "aoiRadius",
  "ghost-radius": "ghostRadius",
  "restore-timeout": "restoreTimeoutMs",
  "balance-period": "balancePeriodMs",
  "min-cell-width": "minCellWidth",
  "busy-load": "balanceAddAbove",
  "idle-load": "balanceRetireBelow",
  insecure: "insecure",
  "admin-origins": "adminOrigins",
  "admin-hosts": "adminHosts",
  "spawn-limit": "spawnLimit",
  "entity-limit": "entityLimit",
  "abuse-limit": "abuseLimit",
  "move-rate": "moveRate",
  "header-timeout": "headerTimeoutMs",
  "client-sockets": "clientSockets",
  "login-rate": "loginRate",
  "client-spawn": "clientSpawn",
  autosave: "autosaveSec",
  "orphan-timeout": "orphanTimeoutSec",
  "mgr-lease": "mgrLeaseMs",
  game: "game",
  watch: "watch",
  history: "historyDir",
  "tls-cert": "tlsCert",
  "tls-key": "tlsKey",
  "tls-ca": "tlsCa",
  "client-url": "clientUrl",
};
