/**
 * Process configuration: flags, then SEAMLESS_* environment variables, then a
 * JSON file given by --config, then defaults. A bad value anywhere is a
 * ConfigError whose message names the flag (or variable, or file key).
 */
import { parseArgs } from "node:util";
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log.ts";
import { DEFAULT_MAX_FRAME } from "./wire/frame.ts";
import { parseAddress } from "./wire/endpoint.ts";

/** The three server roles; null in a Config means "run the whole local cluster". */
export type ServerRole = "cellappmgr" | "cellapp" | "baseapp";

/** Everything a process of any role is configured with. */
export interface Config {
  role: ServerRole | null;
  /** Where the cellappmgr listens for processes, HOST:PORT. */
  mgr: string;
  /** Address this process binds (its peer port and, for the cellappmgr, the admin API). */
  host: string;
  /** Port for other processes; 0 picks a free one. */
  port: number;
  /** Admin API port (cellappmgr and local cluster); 0 picks a free one. */
  adminPort: number;
  /** Deno KV: a file path, a KV Connect URL, or ":memory:". */
  kv: string;
  secret: string | null;
  adminToken: string | null;
  logLevel: LogLevel;
  /** Log lines as text, or one JSON object each (time, level, role, pid, process, msg, entity, space). */
  logFormat: LogFormat;
  /** Largest frame accepted or sent, in bytes. */
  maxFrame: number;
  /** Local cluster only: how many cellapps and baseapps to start. */
  cellapps: number;
  baseapps: number;
  /** NPCs the cellappmgr spawns into the default space when it creates it. */
  npcs: number;
  /** Cell ticks per second. */
  tickHz: number;
  /** Baseapps: the port game clients connect to over WebSocket; 0 picks a free one. */
  clientPort: number;
  /**
   * Baseapps: the host name clients use to reach this machine, in the client URL it announces; null = the bound
   * address, or for a wildcard bind the address the cellappmgr sees it connect from.
   */
  publicHost: string | null;
  /** Baseapps: create an account on its first login (false: only known accounts log in). */
  autoAccounts: boolean;
  /** Baseapps: the top speed (m/s) a client may move the entity it controls. */
  maxSpeed: number;
  /** Cellapps: the default AoI radius of witnesses (m). */
  aoiRadius: number;
  /** Cellapps: how far beyond its rect a cell holds ghosts of its neighbours' entities (m). */
  ghostRadius: number;
  /** Cellapps: how long a ghost whose real's cellapp died waits, frozen, for its real to be restored (ms). */
  restoreTimeoutMs: number;
  /** Cellappmgr: how often partitions move with the load (ms); 0 keeps them where they are. */
  balancePeriodMs: number;
  /** Allows binding a non-loopback address without a secret or an admin token. */
  insecure: boolean;
  /** Admin API: origins (scheme://host[:port]) besides its own that browsers may call it from. */
  adminOrigins: string[];
  /** Admin API: Host names accepted besides the loopback names and the bound address. */
  adminHosts: string[];
  /** Admin API: most entities one spawn request may create. */
  spawnLimit: number;
  /** Admin API: most entities the cluster may hold after a spawn request. */
  entityLimit: number;
  /** Baseapps: abuse score at which a client is disconnected (each bad message adds 1, 1 leaks away per second). */
  abuseLimit: number;
  /** Baseapps: moves per second a client is expected to send; twice as many are dropped as abuse. */
  moveRate: number;
  /** Admin API and client endpoint: milliseconds a connection gets to send a whole request head. */
  headerTimeoutMs: number;
  /** Baseapps: login attempts per second from one address (four times that in a burst). */
  loginRate: number;
  /** Baseapps: let a client choose an existing space and its position at login (tests and load generators). */
  clientSpawn: boolean;
  /** Baseapps: seconds between two saves of a logged-in entity to Deno KV (besides the save at logout). */
  autosaveSec: number;
  /** Cellapps: seconds a cell entity whose baseapp is gone waits to be adopted by a restarted one before it goes. */
  orphanTimeoutSec: number;
  /** The game module every role runs (cli/game.ts); null runs the sample game in entities/. */
  game: string | null;
}

/** Seed 004's offload hysteresis: a real moves cell once this far outside its rect (m). */
export const OFFLOAD_HYSTERESIS = 10;
/** The witness's AoI hysteresis (m): entities leave at the radius plus this. */
export const AOI_HYSTERESIS = 5;

/** A configuration value that cannot be used; the message names where it came from. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Port the cellappmgr listens on unless told otherwise. */
export const DEFAULT_MGR_PORT = 7100;

const ROLE_ALIASES: Record<string, ServerRole> = {
  cellappmgr: "cellappmgr",
  mgr: "cellappmgr",
  cellapp: "cellapp",
  cell: "cellapp",
  baseapp: "baseapp",
  base: "baseapp",
};

interface Spec {
  /** Parses the raw text (or JSON value from a config file); throws a reason. */
  parse(v: unknown): unknown;
  env: string;
  /** A switch: `--name` alone means true. */
  flag?: boolean;
}

const text = (v: unknown): string => {
  if (typeof v !== "string" || v === "") {
    throw new Error(`expected a non-empty string, got ${JSON.stringify(v)}`);
  }
  return v;
};

const integer = (min: number, max: number, what: string) => (v: unknown): number => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${JSON.stringify(v)} is not ${what} (${min}-${max})`);
  }
  return n;
};

const list = (v: unknown): string[] => {
  const items = Array.isArray(v) ? v : String(v).split(",");
  const out = items.map((i) => String(i).trim()).filter((i) => i !== "");
  if (out.some((i) => /\s/.test(i))) throw new Error(`${JSON.stringify(v)} is not a comma-separated list of names`);
  return out;
};

const bool = (v: unknown): boolean => {
  const t = String(v).trim().toLowerCase();
  if (t !== "true" && t !== "false") throw new Error(`${JSON.stringify(v)} is not true or false`);
  return t === "true";
};

const origin = (v: unknown): string[] => {
  const out = list(v);
  for (const o of out) {
    let u: URL | null = null;
    try {
      u = new URL(o);
    } catch {
      // reported below
    }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== o.replace(/\/$/, "")) {
      throw new Error(`${JSON.stringify(o)} is not an origin like https://ops.example.com or http://127.0.0.1:3000`);
    }
  }
  return out.map((o) => o.replace(/\/$/, ""));
};

const hostName = (v: unknown): string => {
  const t = text(v).trim();
  const ok = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(t) || /^\[?[0-9A-Fa-f:.]+\]?$/.test(t) && t.includes(":");
  if (!ok || t === "0.0.0.0" || t.replace(/^\[|\]$/g, "") === "::") {
    throw new Error(`${JSON.stringify(v)} is not a host name or address clients can reach (no scheme, no port)`);
  }
  return t.replace(/^\[|\]$/g, "");
};

const SPECS: Record<string, Spec> = {
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
  "login-rate": { env: "SEAMLESS_LOGIN_RATE", parse: integer(1, 100_000, "a number of logins per second") },
  "client-spawn": { env: "SEAMLESS_CLIENT_SPAWN", parse: bool, flag: true },
  autosave: { env: "SEAMLESS_AUTOSAVE", parse: integer(1, 86_400, "a period in seconds") },
  "orphan-timeout": { env: "SEAMLESS_ORPHAN_TIMEOUT", parse: integer(1, 86_400, "a time in seconds") },
  game: { env: "SEAMLESS_GAME", parse: text },
  "aoi-radius": { env: "SEAMLESS_AOI_RADIUS", parse: integer(1, 100_000, "a radius in metres") },
  "ghost-radius": { env: "SEAMLESS_GHOST_RADIUS", parse: integer(1, 100_000, "a radius in metres") },
  "restore-timeout": { env: "SEAMLESS_RESTORE_TIMEOUT", parse: integer(100, 600_000, "a time in milliseconds") },
  "balance-period": { env: "SEAMLESS_BALANCE_PERIOD", parse: integer(0, 600_000, "a period in milliseconds") },
  "max-speed": {
    env: "SEAMLESS_MAX_SPEED",
    parse: (v) => {
      const n = Number(v);
      if (!(n > 0 && n <= 1000)) throw new Error(`${JSON.stringify(v)} is not a speed in m/s (0-1000]`);
      return n;
    },
  },
};

const KEY_OF: Record<string, keyof Config> = {
  role: "role",
  mgr: "mgr",
  host: "host",
  port: "port",
  "admin-port": "adminPort",
  kv: "kv",
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
  insecure: "insecure",
  "admin-origins": "adminOrigins",
  "admin-hosts": "adminHosts",
  "spawn-limit": "spawnLimit",
  "entity-limit": "entityLimit",
  "abuse-limit": "abuseLimit",
  "move-rate": "moveRate",
  "header-timeout": "headerTimeoutMs",
  "login-rate": "loginRate",
  "client-spawn": "clientSpawn",
  autosave: "autosaveSec",
  "orphan-timeout": "orphanTimeoutSec",
  game: "game",
};

/** Usage text printed by --help. */
export const USAGE = `Usage: deno task start [flags]

With no --role, starts a local cluster: one cellappmgr, two cellapps and one
baseapp, admin API on 127.0.0.1:8080.

Flags (each also read from the environment variable shown):
  --role=ROLE          cellappmgr (mgr), cellapp (cell) or baseapp (base)   SEAMLESS_ROLE
  --mgr=HOST:PORT      where the cellappmgr listens [127.0.0.1:${DEFAULT_MGR_PORT}]        SEAMLESS_MGR
  --host=HOST          address to bind [127.0.0.1]                          SEAMLESS_HOST
  --port=N             port for other processes, 0 = any free one           SEAMLESS_PORT
                       [cellappmgr and local cluster: ${DEFAULT_MGR_PORT}; others: 0]
  --admin-port=N       admin API port, 0 = any free one [8080]              SEAMLESS_ADMIN_PORT
  --kv=PATH|URL        Deno KV: file, KV Connect URL or :memory:            SEAMLESS_KV
                       [data/seamless.kv]
  --secret=TEXT        cluster secret every process must share              SEAMLESS_SECRET
  --admin-token=TEXT   bearer token the admin API requires                  SEAMLESS_ADMIN_TOKEN
  --log-level=LEVEL    debug, info, warn or error [info]                    SEAMLESS_LOG_LEVEL
  --log-format=FORMAT  text, or json: one JSON object per line [text]       SEAMLESS_LOG_FORMAT
  --max-frame=BYTES    largest inter-process frame [${DEFAULT_MAX_FRAME}]            SEAMLESS_MAX_FRAME
  --cellapps=N         local cluster: cellapps to start [2]                 SEAMLESS_CELLAPPS
  --baseapps=N         local cluster: baseapps to start [1]                 SEAMLESS_BASEAPPS
  --npcs=N             NPCs spawned into the default space                  SEAMLESS_NPCS
                       [local cluster: 300; a lone cellappmgr: 0]
  --tick-hz=N          cell ticks per second [10]                           SEAMLESS_TICK_HZ
  --client-port=N      baseapp: WebSocket port for game clients, 0 = any    SEAMLESS_CLIENT_PORT
  --public-host=HOST   baseapp: host name in the client URL it announces     SEAMLESS_PUBLIC_HOST
                       [the bound address; for 0.0.0.0 or ::, the address
                       the cellappmgr sees]
  --auto-accounts=BOOL baseapp: create accounts on first login [true]       SEAMLESS_AUTO_ACCOUNTS
  --max-speed=M        baseapp: top speed of a client's entity, m/s [10]    SEAMLESS_MAX_SPEED
  --aoi-radius=M       cellapp: witnesses' AoI radius, m [500]               SEAMLESS_AOI_RADIUS
  --ghost-radius=M     cellapp: ghost radius, m [AoI radius + 15; no less]   SEAMLESS_GHOST_RADIUS
  --restore-timeout=MS cellapp: how long ghosts of a dead cellapp's         SEAMLESS_RESTORE_TIMEOUT
                       entities stay, frozen, awaiting a restore [5000]
  --balance-period=MS  cellappmgr: how often partitions follow the load;   SEAMLESS_BALANCE_PERIOD
                       0 keeps them still (a retire still drains) [1000]
  --insecure           allow a non-loopback --host without --secret and     SEAMLESS_INSECURE
                       --admin-token
  --admin-origins=LIST admin API: browser origins allowed besides its own   SEAMLESS_ADMIN_ORIGINS
  --admin-hosts=LIST   admin API: Host names allowed besides loopback ones  SEAMLESS_ADMIN_HOSTS
                       and the bound address
  --spawn-limit=N      admin API: entities one spawn may create [10000]     SEAMLESS_SPAWN_LIMIT
  --entity-limit=N     admin API: entities the cluster may hold [100000]    SEAMLESS_ENTITY_LIMIT
  --abuse-limit=N      baseapp: bad-message score that disconnects [10]     SEAMLESS_ABUSE_LIMIT
  --move-rate=N        baseapp: moves/s a client is expected to send;       SEAMLESS_MOVE_RATE
                       twice that is dropped as abuse [the tick rate]
  --header-timeout=MS  admin and client ports: time to send a request head  SEAMLESS_HEADER_TIMEOUT
                       [10000]
  --login-rate=N       baseapp: login attempts per second from one address  SEAMLESS_LOGIN_RATE
                       (a burst of four times that) [5]
  --client-spawn       baseapp: a client may choose an existing space and   SEAMLESS_CLIENT_SPAWN
                       its position at login (tests, bots); without it the
                       server or the game's placement hook decides
  --autosave=S         baseapp: seconds between saves of a logged-in        SEAMLESS_AUTOSAVE
                       entity (also saved at logout) [10]
  --orphan-timeout=S   cellapp: seconds a cell entity whose baseapp died    SEAMLESS_ORPHAN_TIMEOUT
                       waits to be adopted before it is destroyed [60]
  --game=PATH          the game module to run (exports a defineGame game)   SEAMLESS_GAME
                       [the sample game in entities/]
  --config=FILE        JSON file with any of the above (camelCase keys)     SEAMLESS_CONFIG
  --help               this text
`;

/** The result of reading the command line: a config, or a request for help. */
export type ParsedCommand = { help: true } | { help: false; config: Config };

/**
 * Reads flags, environment and config file into a Config. Throws ConfigError
 * naming the offending flag, variable or key.
 */
export function parseCommand(
  args: string[],
  env: Record<string, string | undefined> = Deno.env.toObject(),
  readFile: (path: string) => string = Deno.readTextFileSync,
): ParsedCommand {
  const options: Record<string, { type: "string" | "boolean" }> = {
    config: { type: "string" },
    help: { type: "boolean" },
  };
  for (const [name, spec] of Object.entries(SPECS)) options[name] = { type: spec.flag ? "boolean" : "string" };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false })
      .values;
  } catch (e) {
    throw new ConfigError(describeParseError(e as Error));
  }
  if (values.help) return { help: true };

  const chosen = new Map<string, { raw: unknown; source: string }>();
  const configPath = (values.config as string | undefined) ??
    env.SEAMLESS_CONFIG;
  if (configPath !== undefined) {
    const source = values.config !== undefined ? "--config" : "SEAMLESS_CONFIG";
    for (
      const [key, raw] of Object.entries(
        readConfigFile(configPath, source, readFile),
      )
    ) {
      chosen.set(key, { raw, source: `${configPath}: "${camel(key)}"` });
    }
  }
  for (const [name, spec] of Object.entries(SPECS)) {
    const e = env[spec.env];
    if (e !== undefined) chosen.set(name, { raw: e, source: spec.env });
    const f = values[name];
    if (typeof f === "string" || typeof f === "boolean") {
      chosen.set(name, { raw: f, source: `--${name}` });
    }
  }

  const got: Partial<Record<keyof Config, unknown>> = {};
  for (const [name, { raw, source }] of chosen) {
    try {
      got[KEY_OF[name]] = SPECS[name].parse(raw);
    } catch (e) {
      throw new ConfigError(`${source}: ${(e as Error).message}`);
    }
  }
  const role = (got.role as ServerRole | undefined) ?? null;
  const config: Config = {
    role,
    mgr: (got.mgr as string) ?? `127.0.0.1:${DEFAULT_MGR_PORT}`,
    host: (got.host as string) ?? "127.0.0.1",
    port: (got.port as number) ??
      (role === null || role === "cellappmgr" ? DEFAULT_MGR_PORT : 0),
    adminPort: (got.adminPort as number) ?? 8080,
    kv: (got.kv as string) ?? "data/seamless.kv",
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
    insecure: (got.insecure as boolean) ?? false,
    adminOrigins: (got.adminOrigins as string[]) ?? [],
    adminHosts: (got.adminHosts as string[]) ?? [],
    spawnLimit: (got.spawnLimit as number) ?? 10_000,
    entityLimit: (got.entityLimit as number) ?? 100_000,
    abuseLimit: (got.abuseLimit as number) ?? 10,
    moveRate: (got.moveRate as number) ?? 0,
    headerTimeoutMs: (got.headerTimeoutMs as number) ?? 10_000,
    loginRate: (got.loginRate as number) ?? 5,
    clientSpawn: (got.clientSpawn as boolean) ?? false,
    autosaveSec: (got.autosaveSec as number) ?? 10,
    orphanTimeoutSec: (got.orphanTimeoutSec as number) ?? 60,
    game: (got.game as string) ?? null,
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
  requireSecrets(config);
  return { help: false, config };
}

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/**
 * Secure by default: a process that others can reach from other machines
 * proves membership with the cluster secret, and its admin API wants a token.
 */
function requireSecrets(c: Config): void {
  if (c.insecure || isLoopbackHost(c.host)) return;
  const why = `--host=${c.host} is reachable from other machines`;
  // The local cluster makes a random secret for its children; a lone role needs the shared one.
  if (c.role !== null && c.secret === null) {
    throw new ConfigError(
      `--secret: ${why}, so processes must prove the cluster secret; set --secret (the same on every process) ` +
        `or pass --insecure to run open`,
    );
  }
  if ((c.role === null || c.role === "cellappmgr") && c.adminToken === null) {
    throw new ConfigError(
      `--admin-token: ${why}, so the admin API needs a bearer token; set --admin-token or pass --insecure to run open`,
    );
  }
}

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function readConfigFile(
  path: string,
  source: string,
  readFile: (p: string) => string,
): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFile(path));
  } catch (e) {
    throw new ConfigError(
      `${source}: cannot read ${path} as JSON: ${(e as Error).message}`,
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${source}: ${path} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  const byCamel = new Map(Object.keys(SPECS).map((k) => [camel(k), k]));
  for (const [key, value] of Object.entries(raw)) {
    const name = byCamel.get(key);
    if (!name) {
      throw new ConfigError(
        `${source}: ${path}: unknown key "${key}"; known keys: ${[...byCamel.keys()].join(", ")}`,
      );
    }
    out[name] = typeof value === "number" ? String(value) : value;
  }
  return out;
}

function describeParseError(e: Error): string {
  const m = /'([^']*)'/.exec(e.message);
  const code = (e as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && m) {
    return `${m[1].split("=")[0]}: unknown flag (see --help)`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" && m) {
    return `${m[1]}: unexpected argument; flags look like --name=value`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && m) {
    return `${m[1].split(" ")[0]}: ${e.message}`;
  }
  return e.message;
}
