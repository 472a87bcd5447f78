/**
 * The chaos benchmark's cluster: a cellappmgr, cellapps and baseapps as
 * separate main.ts processes on fixed loopback ports, which it can kill,
 * stop and start again on the same ports and Deno KV files (as an operator
 * or the local cluster's reviver would). It ends only the processes it
 * started, by pid.
 */
import { errorText } from "../../core/errors.ts";
import { fileURLToPath } from "node:url";
import { parseReady, randomSecret, splitLines } from "../../cli/local_cluster.ts";
import { PARENT_WATCH_ENV, type ReadyInfo } from "../../core/process.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));
const READY_TIMEOUT_MS = 30_000;

/** One process of the chaos cluster as it runs now. */
export interface ChaosProc {
  role: "cellappmgr" | "cellapp" | "baseapp";
  /** Which slot it fills (a baseapp's index, a cellapp's index); stays the same across restarts. */
  slot: number;
  pid: number;
  child: Deno.ChildProcess;
  ready: ReadyInfo;
  /** Its last stderr lines (logs), for a failure message. */
  stderr: string[];
}

/** What to start. */
export interface ChaosClusterOptions {
  cellapps: number;
  baseapps: number;
  /** Directory for the Deno KV files. */
  dir: string;
  /** The baseapps' PostgreSQL URL (--db) instead of one Deno KV file in `dir`. */
  db?: string | null;
  /** Extra flags per role. */
  mgrFlags?: string[];
  cellFlags?: string[];
  baseFlags?: string[];
}

/** A free loopback port a moment ago. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  return port;
}

/** The processes of one chaos run and how to start each again alike. */
export class ChaosCluster {
  readonly procs: ChaosProc[] = [];
  readonly admin: string;
  readonly mgrAddress: string;
  /** Client URLs of the baseapps, by slot (the same after a restart). */
  readonly clientUrls: string[];
  readonly #flags = new Map<string, string[]>();
  readonly #env: Record<string, string>;
  readonly #all: ChaosProc[] = [];

  private constructor(private readonly o: ChaosClusterOptions, mgrPort: number, adminPort: number) {
    this.admin = `http://127.0.0.1:${adminPort}`;
    this.mgrAddress = `127.0.0.1:${mgrPort}`;
    this.#env = { SEAMLESS_SECRET: randomSecret(), [PARENT_WATCH_ENV]: "1" };
    this.#flags.set("cellappmgr:0", [
      "--role=cellappmgr",
      `--port=${mgrPort}`,
      `--admin-port=${adminPort}`,
      `--kv=${o.dir}/mgr.kv`,
      "--npcs=0",
      ...(o.mgrFlags ?? []),
    ]);
    for (let i = 0; i < o.cellapps; i++) {
      this.#flags.set(`cellapp:${i}`, [
        "--role=cellapp",
        `--mgr=${this.mgrAddress}`,
        "--port=0",
        ...(o.cellFlags ?? []),
      ]);
    }
    this.clientUrls = [];
    for (let i = 0; i < o.baseapps; i++) {
      const clientPort = freePort();
      this.clientUrls.push(`ws://127.0.0.1:${clientPort}`);
      this.#flags.set(`baseapp:${i}`, [
        "--role=baseapp",
        `--mgr=${this.mgrAddress}`,
        `--port=${freePort()}`,
        `--client-port=${clientPort}`,
        // One database for every baseapp, as the local cluster has: a player resumes on any of them.
        o.db ? `--db=${o.db}` : `--kv=${o.dir}/base.kv`,
        ...(o.baseFlags ?? []),
      ]);
    }
  }

  /** Starts every process and waits for their ready lines. */
  static async start(o: ChaosClusterOptions): Promise<ChaosCluster> {
    const c = new ChaosCluster(o, freePort(), freePort());
    try {
      await c.startRole("cellappmgr", 0);
      await Promise.all(Array.from({ length: o.cellapps }, (_, i) => c.startRole("cellapp", i)));
      await Promise.all(Array.from({ length: o.baseapps }, (_, i) => c.startRole("baseapp", i)));
    } catch (e) {
      await c.stop();
      throw e;
    }
    return c;
  }

  /** Starts (again) the process of `role` in `slot` with its flags and waits for its ready line. */
  async startRole(role: ChaosProc["role"], slot: number): Promise<ChaosProc> {
    const flags = this.#flags.get(`${role}:${slot}`);
    if (!flags) throw new Error(`the chaos cluster has no ${role} ${slot}`);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", CONFIG, MAIN, "--log-level=warn", ...flags],
      env: this.#env,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const p: ChaosProc = { role, slot, pid: child.pid, child, ready: { role, pid: child.pid }, stderr: [] };
    this.#all.push(p);
    this.procs.push(p);
    keepTail(child.stderr, p.stderr);
    const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ready = (async () => {
      for (;;) {
        const { value, done } = await lines.read();
        if (done) throw new Error(`${role} ${slot} (pid ${p.pid}) exited before its ready line`);
        const r = parseReady(value);
        if (r) return r;
      }
    })();
    try {
      p.ready = await Promise.race([
        ready,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(new Error(`${role} ${slot} (pid ${p.pid}): no ready line`)), READY_TIMEOUT_MS);
        }),
      ]);
    } catch (e) {
      throw new Error(`${errorText(e)}\n${p.stderr.slice(-20).join("\n")}`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
    (async () => {
      while (!(await lines.read()).done) { /* drain */ }
    })().catch(() => {});
    return p;
  }

  /** Sends `signal` to `p`; SIGKILL also takes it out of `procs` and waits for it to end. */
  async signal(p: ChaosProc, signal: Deno.Signal): Promise<void> {
    try {
      p.child.kill(signal);
    } catch (e) {
      throw new Error(`${signal} to ${p.role} ${p.slot} (pid ${p.pid}) failed: ${errorText(e)}`, { cause: e });
    }
    if (signal === "SIGKILL") {
      this.procs.splice(this.procs.indexOf(p), 1);
      await p.child.status;
    }
  }

  /** The running processes of `role`. */
  of(role: ChaosProc["role"]): ChaosProc[] {
    return this.procs.filter((p) => p.role === role);
  }

  /** The kept log lines of every process it ever started, each prefixed with the process. */
  logs(): string[] {
    return this.#all.flatMap((p) => p.stderr.map((l) => `${p.role} ${p.slot} pid ${p.pid}: ${l}`));
  }

  /** Kills every process it ever started (by pid) and waits for them. */
  async stop(): Promise<void> {
    for (const p of this.#all) {
      try {
        p.child.kill("SIGCONT");
        p.child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
    await Promise.allSettled(this.#all.map((p) => p.child.status));
  }
}

/** Keeps the last lines of a stream. */
async function keepTail(stream: ReadableStream<Uint8Array>, into: string[]): Promise<void> {
  try {
    for await (const line of stream.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) {
      into.push(line);
      if (into.length > 400) into.splice(0, 200);
    }
  } catch {
    // killed mid-line
  }
}
