/**
 * The local cluster: this process starts one cellappmgr, the cellapps and the
 * baseapps as child processes of the same program, waits until each is ready,
 * and stops them all on SIGINT or SIGTERM.
 */
import { errorText } from "../core/errors.ts";
import { fileURLToPath as fromFileUrl } from "node:url";
import type { Config } from "../core/config/mod.ts";
import { createLogger, type Logger } from "../core/log.ts";
import { announceReady, isShutdownLine, onStopSignal, PARENT_WATCH_ENV, type ReadyInfo } from "../core/process.ts";
import { StartError } from "./roles.ts";
import { revive } from "./reviver.ts";
import { GameSource } from "./game_source.ts";
import { watchGame } from "./game_watch.ts";

/** One child process of the local cluster. */
export interface Child {
  role: string;
  pid: number;
  process: Deno.ChildProcess;
  /** The child's `{"ready": ...}` line. */
  ready: Promise<ReadyInfo>;
  status: Promise<Deno.CommandStatus>;
}

/**
 * V8 heap settings per role (SEAMLESS_V8_FLAGS replaces them for every child, empty for V8's own; flags in
 * DENO_V8_FLAGS come after them and win): semi-spaces of at most 8 MB (V8 lets the young generation grow to
 * ~50 MB) and, for the cellapp and cellappmgr, an old generation that may grow by 30 % over what the last full
 * collection kept (V8 allows up to 4 times). Peer benchmark, 500 clients, peak RSS: cellapp 123 -> 112 MB at
 * S = 2000 m, 193 -> 148 MB at S = 400 m, for CPU within the noise. The baseapp takes the 8 MB semi-spaces only:
 * 161 -> 113 MB at S = 2000 m, 155 -> 128 MB at S = 400 m, for 14.9 -> 15.9 % and 17.4 -> 17.4 % of a core (medians
 * of alternating runs, spread 13-18 %). Smaller semi-spaces cost it more: 4 MB (113 MB) about 3 % of a core, 2 MB
 * (146 MB: more objects promoted) about 5 %; adding --heap-growing-percent=30 cost about 6 % of a core.
 * The cellappmgr allocates little: 1 MB semi-spaces take it from 93 to 83 MB for the same 1.3-1.4 % of a core.
 * bench/peer.ts with SEAMLESS_V8_FLAGS to compare; docs/benchmarks.md#memory.
 */
export const CHILD_V8_FLAGS: Readonly<Record<string, string>> = {
  cellappmgr: "--max-semi-space-size=1,--heap-growing-percent=30",
  cellapp: "--max-semi-space-size=8,--heap-growing-percent=30",
  baseapp: "--max-semi-space-size=8",
};

/** How long a child may take to print its ready line. */
export const READY_TIMEOUT_MS = 60_000;
/** How long children get to stop after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 10_000;
/**
 * After a cluster shutdown the cellappmgr exits last: a child still running this long after it is one that took no
 * part (started again while the shutdown ran) and has nothing left to join; it gets SIGTERM, then SIGKILL after
 * LEFTOVER_GRACE_MS, so that the local cluster ends within a few seconds of POST /api/shutdown.
 */
const LEFTOVER_WAIT_MS = 1000;
const LEFTOVER_GRACE_MS = 1500;

/**
 * The command that runs main.ts again: the same Deno with the project's
 * config (so "unstable": ["kv"] and the lock apply), or the compiled binary.
 */
export function selfCommand(): { cmd: string; args: string[] } {
  if (Deno.mainModule.includes("/deno-compile-")) {
    return { cmd: Deno.execPath(), args: [] };
  }
  const main = fromFileUrl(new URL("../main.ts", import.meta.url));
  const config = fromFileUrl(new URL("../deno.json", import.meta.url));
  return {
    cmd: Deno.execPath(),
    args: ["run", "-A", "--config", config, main],
  };
}

/**
 * Starts a child running main.ts with `flags`; its stdout is scanned for the ready line, and for the line saying a
 * cluster shutdown has begun (`onShutdown`).
 */
export function spawnSelf(
  role: string,
  flags: string[],
  env: Record<string, string>,
  log: Logger,
  wrap: readonly string[] = [],
  onShutdown: () => void = () => {},
): Child {
  const self = selfCommand();
  // Deno refuses to start with an empty DENO_V8_FLAGS: set only when there is a flag.
  const v8 = [Deno.env.get("SEAMLESS_V8_FLAGS") ?? CHILD_V8_FLAGS[role] ?? "", Deno.env.get("DENO_V8_FLAGS") ?? ""]
    .filter((f) => f.trim() !== "").join(",");
  // Under a command prefix that execs the program (a test host's `ip netns exec NS`), the pid stays the child's.
  const [cmd, ...args] = [...wrap, self.cmd, ...self.args, ...flags];
  const process = new Deno.Command(cmd, {
    args,
    env: { ...(v8 ? { DENO_V8_FLAGS: v8 } : {}), ...env, [PARENT_WATCH_ENV]: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const ready = readReadyLine(process.stdout, role, log, onShutdown);
  return { role, pid: process.pid, process, ready, status: process.status };
}

async function readReadyLine(
  stream: ReadableStream<Uint8Array>,
  role: string,
  log: Logger,
  onShutdown: () => void,
): Promise<ReadyInfo> {
  const lines = stream.pipeThrough(new TextDecoderStream()).pipeThrough(
    splitLines(),
  );
  const reader = lines.getReader();
  let found: ReadyInfo | null = null;
  while (found === null) {
    const { value, done } = await reader.read();
    if (done) throw new StartError(`the ${role} exited before it was ready`);
    found = parseReady(value);
    if (found === null) console.log(value);
  }
  // Keep draining so the child never blocks on a full pipe.
  (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      if (isShutdownLine(value)) onShutdown();
      console.log(value);
    }
  })().catch((e) => log.debug(`${role} stdout: ${errorText(e)}`));
  return found;
}

/** Reads a `{"ready": ...}` line; null for any other line. */
export function parseReady(line: string): ReadyInfo | null {
  if (!line.startsWith('{"ready"')) return null;
  try {
    return (JSON.parse(line) as { ready: ReadyInfo }).ready;
  } catch {
    return null;
  }
}

/** Splits a text stream into lines. */
export function splitLines(): TransformStream<string, string> {
  let rest = "";
  return new TransformStream({
    transform(chunk, out) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const p of parts) out.enqueue(p);
    },
    flush(out) {
      if (rest) out.enqueue(rest);
    },
  });
}

/** `p`, or a StartError saying `what` was not ready within `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((
      _,
      rej,
    ) => (t = setTimeout(
      () => rej(new StartError(`${what} not ready within ${ms} ms`)),
      ms,
    ))),
  ]).finally(() => clearTimeout(t));
}

/** Runs the local cluster until it is stopped; returns the exit status for this process. */
export async function runLocalCluster(cfg: Config): Promise<number> {
  const log = createLogger(`cluster[${Deno.pid}]`, cfg.logLevel, { format: cfg.logFormat, role: "cluster" });
  /** Each child as it runs now: the reviver puts a restarted one in its place. */
  const children: { current: Child }[] = [];
  let stopping = false;
  /** Set when the cellappmgr announces a cluster shutdown: from then on no child is started again. */
  let shutdownBegun = false;
  const noRestarts = () => stopping || shutdownBegun;
  const env = childEnv(cfg);

  let unwatch = () => {};
  const stopAll = async (why: string, graceMs = STOP_GRACE_MS) => {
    if (stopping) return;
    stopping = true;
    unwatch();
    log.info(`stopping the local cluster: ${why}`);
    for (const c of children.slice().reverse()) signal(c.current, "SIGTERM");
    const timer = setTimeout(() => {
      for (const c of children) signal(c.current, "SIGKILL");
    }, graceMs);
    await Promise.allSettled(children.map((c) => c.current.status));
    clearTimeout(timer);
  };
  onStopSignal((s) => stopAll(`received ${s}`), STOP_GRACE_MS + 5000);

  /** The flags each child was started with, so that the reviver starts it again alike. */
  const flagsOf = new Map<Child, string[]>();
  const onShutdown = () => {
    if (shutdownBegun) return;
    shutdownBegun = true;
    log.info("a cluster shutdown has begun: no child is restarted from now on");
  };
  const spawn = (role: string, flags: string[]) => {
    const c = spawnSelf(role, flags, env, log, [], onShutdown);
    flagsOf.set(c, flags);
    return c;
  };
  try {
    const mgrFlags = (port: number, adminPort: number) => cellappmgrFlags(cfg, port, adminPort);
    const mgr = spawn("cellappmgr", mgrFlags(cfg.port, cfg.adminPort));
    children.push({ current: mgr });
    const mgrReady = await withTimeout(
      mgr.ready,
      READY_TIMEOUT_MS,
      "the cellappmgr",
    );
    // A restarted cellappmgr takes the ports the first one got: the members reconnect to it there.
    flagsOf.set(
      mgr,
      mgrFlags(
        mgrReady.address ? portOf(mgrReady.address) : cfg.port,
        mgrReady.admin ? portOf(mgrReady.admin) : cfg.adminPort,
      ),
    );
    const members: Child[] = [];
    for (let i = 0; i < cfg.cellapps; i++) members.push(spawn("cellapp", cellappFlags(cfg, mgrReady.address!)));
    for (let i = 0; i < cfg.baseapps; i++) members.push(spawn("baseapp", baseappFlags(cfg, mgrReady.address!, i)));
    children.push(...members.map((current) => ({ current })));
    await Promise.all(
      members.map((c) => withTimeout(c.ready, READY_TIMEOUT_MS, `the ${c.role} (pid ${c.pid})`)),
    );
    log.info(
      `local cluster up: cellappmgr, ${cfg.cellapps} cellapps, ${cfg.baseapps} baseapps. ` +
        `Admin API at ${mgrReady.admin}; try: curl ${mgrReady.admin}/api/cluster`,
    );
    if (cfg.watch) unwatch = watchGame(new GameSource(cfg.game).folder, mgrReady.admin!, cfg.adminToken, log);
    announceReady({
      role: "cluster",
      pid: Deno.pid,
      address: mgrReady.address,
      admin: mgrReady.admin,
      children: children.map(({ current: c }) => ({ role: c.role, pid: c.pid })),
    });
  } catch (e) {
    log.error(errorText(e));
    await stopAll("start failed");
    return 1;
  }

  // Children exit on their own after POST /api/shutdown; one that dies otherwise is started again.
  const statuses = children.map((slot) =>
    revive(slot, () => spawn(slot.current.role, flagsOf.get(slot.current)!), noRestarts, log)
  );
  // The cellappmgr is not restarted once it exits cleanly (the end of a shutdown, or a signal of its own) or after a
  // shutdown began: the others have nothing left to join, and any still running after a moment are stopped.
  statuses[0].then(async () => {
    await Promise.race([
      Promise.allSettled(children.map((c) => c.current.status)),
      new Promise((r) => setTimeout(r, LEFTOVER_WAIT_MS)),
    ]);
    await stopAll("the cellappmgr has exited", LEFTOVER_GRACE_MS);
  });
  const ended = await Promise.all(statuses);
  const clean = stopping || shutdownBegun || ended.every((s) => s.code === 0);
  log.info(
    `every process of the local cluster has exited${clean ? "" : " (some with errors)"}`,
  );
  return clean ? 0 : 1;
}

/** The environment every child gets: the cluster secret (a random one without --secret) and the admin token. */
export function childEnv(cfg: Config): Record<string, string> {
  // Without a secret anyone who reaches a port would be a member: the children share a random one.
  const env: Record<string, string> = { SEAMLESS_SECRET: cfg.secret ?? randomSecret() };
  if (cfg.adminToken !== null) env.SEAMLESS_ADMIN_TOKEN = cfg.adminToken;
  return env;
}

/** Flags every child gets from the local cluster's configuration. */
function commonFlags(cfg: Config): string[] {
  return [
    `--host=${cfg.host}`,
    `--log-level=${cfg.logLevel}`,
    `--log-format=${cfg.logFormat}`,
    `--max-frame=${cfg.maxFrame}`,
    `--tick-hz=${cfg.tickHz}`,
    `--aoi-radius=${cfg.aoiRadius}`,
    `--ghost-radius=${cfg.ghostRadius}`,
    `--header-timeout=${cfg.headerTimeoutMs}`,
    ...(cfg.insecure ? ["--insecure"] : []),
    ...(cfg.tlsCert !== null ? [`--tls-cert=${cfg.tlsCert}`] : []),
    ...(cfg.tlsKey !== null ? [`--tls-key=${cfg.tlsKey}`] : []),
    ...(cfg.tlsCa !== null ? [`--tls-ca=${cfg.tlsCa}`] : []),
    // Already made absolute (cli/run.ts): the children resolve it alike whatever their working directory.
    ...(cfg.game !== null ? [`--game=${cfg.game}`] : []),
    ...(cfg.historyDir !== null ? [`--history=${cfg.historyDir}`] : []),
  ];
}

const list = (name: string, items: string[]) => items.length ? [`--${name}=${items.join(",")}`] : [];

/** The command line of the local cluster's cellappmgr, listening on `port` and `adminPort`. */
export function cellappmgrFlags(cfg: Config, port: number, adminPort: number): string[] {
  return [
    "--role=cellappmgr",
    `--port=${port}`,
    `--admin-port=${adminPort}`,
    ...dbFlags(cfg, mgrKv(cfg.kv)),
    `--npcs=${cfg.npcs}`,
    `--spawn-limit=${cfg.spawnLimit}`,
    `--entity-limit=${cfg.entityLimit}`,
    `--balance-period=${cfg.balancePeriodMs}`,
    `--min-cell-width=${cfg.minCellWidth}`,
    `--busy-load=${cfg.balanceAddAbove}`,
    `--idle-load=${cfg.balanceRetireBelow}`,
    ...list("admin-origins", cfg.adminOrigins),
    ...list("admin-hosts", cfg.adminHosts),
    ...commonFlags(cfg),
  ];
}

/** The command line of one of the local cluster's cellapps, joining the cellappmgr at `mgr`. */
export function cellappFlags(cfg: Config, mgr: string): string[] {
  return [
    "--role=cellapp",
    `--mgr=${mgr}`,
    "--port=0",
    `--orphan-timeout=${cfg.orphanTimeoutSec}`,
    `--restore-timeout=${cfg.restoreTimeoutMs}`,
    ...(cfg.mgrLeaseMs === null ? [] : [`--mgr-lease=${cfg.mgrLeaseMs}`]),
    ...commonFlags(cfg),
  ];
}

/**
 * The command line of the local cluster's baseapp number `index` (from 0), joining the cellappmgr at `mgr`. With
 * `--client-port=P` (not 0) baseapp i serves clients on P + i.
 */
export function baseappFlags(cfg: Config, mgr: string, index = 0): string[] {
  return [
    "--role=baseapp",
    `--mgr=${mgr}`,
    "--port=0",
    ...(cfg.clientPort !== 0 ? [`--client-port=${cfg.clientPort + index}`] : []),
    ...(cfg.mgrLeaseMs === null ? [] : [`--mgr-lease=${cfg.mgrLeaseMs}`]),
    ...dbFlags(cfg, cfg.kv),
    `--max-speed=${cfg.maxSpeed}`,
    `--auto-accounts=${cfg.autoAccounts}`,
    `--abuse-limit=${cfg.abuseLimit}`,
    `--move-rate=${cfg.moveRate}`,
    `--login-rate=${cfg.loginRate}`,
    `--client-sockets=${cfg.clientSockets}`,
    `--autosave=${cfg.autosaveSec}`,
    ...(cfg.publicHost ? [`--public-host=${cfg.publicHost}`] : []),
    ...(cfg.clientUrl ? [`--client-url=${cfg.clientUrl}`] : []),
    ...(cfg.clientSpawn ? ["--client-spawn"] : []),
    ...commonFlags(cfg),
  ];
}

/**
 * Why the local cluster cannot run with `cfg`, whose flags `given` were set (one that names a single process
 * elsewhere, or that cannot be shared by its processes), or null. Every other
 * flag reaches the children that use it (cellappmgrFlags, cellappFlags, baseappFlags, childEnv).
 */
export function refusedByLocalCluster(cfg: Config, given: ReadonlySet<string>): string | null {
  if (given.has("mgr")) {
    return `--mgr=${cfg.mgr} joins a cellappmgr elsewhere, which the local cluster does not: it starts its own. ` +
      `Give --role=cellapp or --role=baseapp with it`;
  }
  if (cfg.clientUrl !== null && cfg.baseapps > 1) {
    return `--client-url names one baseapp's address, and the local cluster starts ${cfg.baseapps} ` +
      `(--baseapps): start each baseapp with its own (--role=baseapp --client-url=...)`;
  }
  if (cfg.clientPort !== 0 && cfg.clientPort + cfg.baseapps - 1 > 65535) {
    return `--client-port=${cfg.clientPort}: the local cluster's ${cfg.baseapps} baseapps take ports ` +
      `${cfg.clientPort}-${cfg.clientPort + cfg.baseapps - 1}, past 65535`;
  }
  return null;
}

/** The database flag of a child: the shared PostgreSQL URL when there is one, else its Deno KV `kv`. */
function dbFlags(cfg: Config, kv: string): string[] {
  return cfg.db !== null ? [`--db=${cfg.db}`] : [`--kv=${kv}`];
}

/** The port of HOST:PORT or of a URL. */
function portOf(address: string): number {
  return Number(/:(\d+)\/?$/.exec(address)?.[1] ?? 0);
}

/**
 * The cellappmgr's own database beside the baseapps' one: SQLite serialises
 * writers, and the two have nothing to share.
 */
export function mgrKv(kv: string): string {
  if (kv === ":memory:" || /^https?:\/\//.test(kv)) return kv;
  return kv.endsWith(".kv") ? `${kv.slice(0, -3)}.cellappmgr.kv` : `${kv}.cellappmgr`;
}

/** 32 random bytes as base64url: a cluster secret that lives as long as the local cluster. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function signal(c: Child, sig: Deno.Signal): void {
  try {
    c.process.kill(sig);
  } catch {
    // Already exited.
  }
}
