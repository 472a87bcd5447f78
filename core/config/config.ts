/** The resolved configuration every process runs with, and the error a bad value raises. */
import type { LogFormat, LogLevel } from "../log.ts";
import type { SocketKind } from "../net/mod.ts";

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
  /** PostgreSQL instead of Deno KV: a postgres:// URL (baseapps on many hosts share it); null uses `kv`. */
  db: string | null;
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
  /** Cellappmgr: no balanced cell becomes narrower than this (m); it may be narrower than the ghost radius. */
  minCellWidth: number;
  /** Cellappmgr (`--busy-load`): a space gains a cell while its cellapps' mean load is above this (share of a core). */
  balanceAddAbove: number;
  /** Cellappmgr (`--idle-load`): a space retires a cell balancing added while its cells' mean load is below this. */
  balanceRetireBelow: number;
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
  /** Baseapps: the client endpoint's sockets, epoll ones (Linux, IPv4; else Deno's) or Deno's (core/net). */
  clientSockets: SocketKind;
  /** Baseapps: login attempts per second from one address (four times that in a burst). */
  loginRate: number;
  /** Baseapps: let a client choose an existing space and its position at login (tests and load generators). */
  clientSpawn: boolean;
  /** Baseapps: seconds between two saves of a logged-in entity to the database (besides the save at logout). */
  autosaveSec: number;
  /** Cellapps: seconds a cell entity whose baseapp is gone waits to be adopted by a restarted one before it goes. */
  orphanTimeoutSec: number;
  /**
   * Cellapps and baseapps (`--mgr-lease`): how long (ms) their cells or bases act after the cellappmgr last answered;
   * null for the default, a share of its dead timeout (core/wire/lease.ts); 0 for no lease (they act on through a
   * cellappmgr outage).
   */
  mgrLeaseMs: number | null;
  /** The game module every role runs (cli/game.ts); null runs the sample game in entities/. */
  game: string | null;
  /** Local cluster: reload the game in every process when a file of its folder changes (docs/operations.md). */
  watch: boolean;
  /** A folder each process writes its claim log into (core/history.ts, checked by tools/history/); null: none. */
  historyDir: string | null;
  /** PEM certificate chain and private key: TLS on what this role serves (client WebSocket, admin API). */
  tlsCert: string | null;
  tlsKey: string | null;
  /** PEM CA that signed every process's certificate: with it, process ports run over TLS checked against it. */
  tlsCa: string | null;
  /** Baseapps: the URL clients are told, as is (a TLS-terminating proxy's); null = built from the bound port. */
  clientUrl: string | null;
  /** The files of tlsCert, tlsKey and tlsCa, read and checked when the command line is (tls.ts); null without. */
  tls: TlsMaterial | null;
}

/** A configuration value that cannot be used; the message names where it came from. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Port the cellappmgr listens on unless told otherwise. */
export const DEFAULT_MGR_PORT = 7100;

/** The PEM text of this process's certificate chain and key, and of the CA process ports are checked against. */
export interface TlsMaterial {
  cert: string;
  key: string;
  /** Set with --tls-ca: the process ports run over TLS, each dialler checking the peer against this CA. */
  ca: string | null;
}
