/**
 * Starts real main.ts processes for cluster tests and makes sure they end:
 * every process started through a Procs group is killed by pid when the group
 * is disposed, also when the test failed.
 */
import { errorText } from "../core/errors.ts";
import { fileURLToPath } from "node:url";
import type { ReadyInfo } from "../core/process.ts";
import { PARENT_WATCH_ENV } from "../core/process.ts";
import { parseReady, splitLines } from "../cli/local_cluster.ts";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../deno.json", import.meta.url));

/** A started main.ts process. */
export interface Proc {
  pid: number;
  child: Deno.ChildProcess;
  /** What it printed on its ready line. */
  ready: ReadyInfo;
  /** Its stderr so far (logs), for assertions and for failure messages. */
  stderr: string[];
  status: Promise<Deno.CommandStatus>;
  /** Sends a signal; ignores a process that has already exited. */
  kill(signal?: Deno.Signal): void;
}

/** Options for one process. */
export interface StartOptions {
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** Resolve without a ready line (for processes expected to fail). */
  noReady?: boolean;
  /**
   * A command prefix the process runs under, e.g. `ip netns exec NS` (a test host, hosts.ts). It must exec the
   * program, so that the pid is the process's own.
   */
  wrap?: string[];
}

/** A group of processes that are all killed when the group is disposed. */
export class Procs {
  readonly all: Proc[] = [];

  /** Starts `main.ts` with `flags` and waits for its ready line. */
  async start(flags: string[], opts: StartOptions = {}): Promise<Proc> {
    const [cmd, ...args] = [...opts.wrap ?? [], Deno.execPath(), "run", "-A", "--config", CONFIG, MAIN, ...flags];
    const child = new Deno.Command(cmd, {
      args,
      // Partitions hold still unless a test asks for balancing (--balance-period): most tests assert on cell rects.
      env: {
        SEAMLESS_LOG_LEVEL: "info",
        // Not beside a PostgreSQL database (--db and --kv together are refused).
        ...(flags.some((f) => f.startsWith("--db=")) || opts.env?.SEAMLESS_DB ? {} : { SEAMLESS_KV: ":memory:" }),
        SEAMLESS_BALANCE_PERIOD: "0",
        ...opts.env,
        [PARENT_WATCH_ENV]: "1",
      },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderr: string[] = [];
    const status = child.status;
    const proc: Proc = {
      pid: child.pid,
      child,
      ready: { role: "?", pid: child.pid },
      stderr,
      status,
      kill(signal: Deno.Signal = "SIGTERM") {
        try {
          child.kill(signal);
        } catch {
          // already exited
        }
      },
    };
    this.all.push(proc);
    collect(child.stderr, stderr);
    const ready = readReady(child.stdout);
    if (opts.noReady) {
      ready.catch(() => {});
      return proc;
    }
    const timeout = opts.readyTimeoutMs ?? 30_000;
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      proc.ready = await Promise.race([
        ready,
        new Promise<never>((_, rej) => {
          timer = setTimeout(
            () => rej(new Error(`no ready line within ${timeout} ms`)),
            timeout,
          );
        }),
      ]);
    } catch (e) {
      throw new Error(
        `main.ts ${flags.join(" ")}: ${errorText(e)}\nstderr:\n${stderr.join("\n")}`,
        { cause: e },
      );
    } finally {
      clearTimeout(timer);
    }
    return proc;
  }

  /** Processes started by another process (a local cluster's children), killed by pid at the end. */
  readonly adopted: number[] = [];

  /** Takes responsibility for ending `pid` too. */
  adopt(pid: number): void {
    this.adopted.push(pid);
  }

  /** Kills every process of the group by pid and waits for them. */
  async [Symbol.asyncDispose](): Promise<void> {
    for (const p of this.all) p.kill("SIGKILL");
    for (const pid of this.adopted) {
      if (isAlive(pid)) Deno.kill(pid, "SIGKILL");
    }
    await Promise.allSettled(this.all.map((p) => p.status));
    // Let the stream readers see EOF before the test's resource check.
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function readReady(
  stream: ReadableStream<Uint8Array>,
): Promise<ReadyInfo> {
  const reader = stream.pipeThrough(new TextDecoderStream()).pipeThrough(
    splitLines(),
  ).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("exited before printing its ready line");
    const ready = parseReady(value);
    if (ready) {
      // Keep draining so the child never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* discard */ }
      })().catch(() => {});
      return ready;
    }
  }
}

async function collect(
  stream: ReadableStream<Uint8Array>,
  into: string[],
): Promise<void> {
  try {
    for await (
      const line of stream.pipeThrough(new TextDecoderStream()).pipeThrough(
        splitLines(),
      )
    ) {
      into.push(line);
      if (into.length > 2000) into.splice(0, 1000);
    }
  } catch {
    // The process was killed mid-line.
  }
}

/** GETs (or sends) JSON to the admin API; returns status and parsed body. */
export async function api(
  base: string,
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; body: unknown; headers: Headers }> {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON; keep the text
  }
  return { status: res.status, body, headers: res.headers };
}

/** A loopback port that was free a moment ago. */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = l.addr.port;
  l.close();
  return port;
}

/** True while a process with `pid` exists (SIGCONT changes nothing for a running process). */
export function isAlive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
