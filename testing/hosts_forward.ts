/**
 * Forwards from the test process (root namespace) into a test host: the test listens on a loopback port and pipes
 * each connection to a unix socket (filesystem sockets cross namespaces), where an agent running inside the host's
 * namespace (forward_agent.ts) pipes it on to the target. The target sees the connection come from the host's
 * address. One agent per host serves all its forwards.
 */
import { fileURLToPath } from "node:url";
import { splitLines } from "../cli/local_cluster.ts";
import { parseAddress } from "../core/wire/mod.ts";
import { within } from "./wait.ts";

/** What a forward needs of a test host (hosts.ts `Host`): its name, for messages, and its namespace. */
export interface ForwardHost {
  readonly name: string;
  readonly ns: string;
}

const AGENT = fileURLToPath(new URL("./forward_agent.ts", import.meta.url));

/** Copies `from` to `to` until `from` ends or either fails. */
async function copy(from: Deno.Conn, to: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) return;
      for (let off = 0; off < n;) off += await to.write(buf.subarray(off, n));
    }
  } catch {
    // Either side closed.
  }
}

/** Closes `c`, which may be closed already. */
export function closeQuietly(c: Deno.Conn | Deno.Listener): void {
  try {
    c.close();
  } catch {
    // already closed
  }
}

/** Pipes `a` and `b` both ways until one side ends, then closes both. */
export async function splice(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  await Promise.race([copy(a, b), copy(b, a)]);
  closeQuietly(a);
  closeQuietly(b);
}

/** The target of a forward: where to connect, and how to write the loopback address that replaces it. */
function parseTarget(target: string): { hostname: string; port: number; shown: (port: number) => string } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]+)(.*)$/i.exec(target);
  if (!m) {
    const { hostname, port } = parseAddress(target);
    return { hostname, port, shown: (p) => `127.0.0.1:${p}` };
  }
  const u = new URL(target);
  const port = u.port ? Number(u.port) : /^(wss|https):$/.test(u.protocol) ? 443 : 80;
  return { hostname: u.hostname.replace(/^\[|\]$/g, ""), port, shown: (p) => `${m[1]}127.0.0.1:${p}${m[3]}` };
}

interface Agent {
  child: Deno.ChildProcess;
  input: WritableStreamDefaultWriter<Uint8Array>;
  lines: ReadableStreamDefaultReader<string>;
}

/** The forwards of one group of hosts, ended together. */
export class Forwards<H extends ForwardHost = ForwardHost> {
  readonly #spawn: (host: H, args: string[]) => Deno.ChildProcess;
  readonly #agents = new Map<string, Agent>();
  readonly #listeners: Deno.Listener[] = [];
  readonly #conns = new Set<Deno.Conn>();
  #dir: Promise<string> | null = null;
  #count = 0;

  /** `spawn` starts a program inside a host's namespace with stdin and stdout piped. */
  constructor(spawn: (host: H, args: string[]) => Deno.ChildProcess) {
    this.#spawn = spawn;
  }

  /** Starts forwarding a loopback port to `target` from `from`; returns `target` with the loopback address. */
  async open(from: H, target: string): Promise<string> {
    const t = parseTarget(target);
    this.#dir ??= Deno.makeTempDir({ prefix: "seamless-fwd-" });
    const path = `${await this.#dir}/f${++this.#count}.sock`;
    const agent = this.#agent(from);
    await agent.input.write(
      new TextEncoder().encode(JSON.stringify({ path, hostname: t.hostname, port: t.port }) + "\n"),
    );
    const answer = await within(
      `the forward agent in ${from.name} (${from.ns}) to listen for ${target}`,
      agent.lines.read(),
      15_000,
    );
    if (answer.done || JSON.parse(answer.value).listening !== path) {
      throw new Error(`forward agent in ${from.ns} for ${target}: ${answer.done ? "exited" : answer.value}`);
    }
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.#listeners.push(listener);
    (async () => {
      for await (const local of listener) {
        this.#conns.add(local);
        Deno.connect({ transport: "unix", path }).then(async (remote) => {
          this.#conns.add(remote);
          await splice(local, remote);
          this.#conns.delete(remote);
        }, () => closeQuietly(local)).finally(() => this.#conns.delete(local));
      }
    })().catch(() => {});
    return t.shown(listener.addr.port);
  }

  #agent(host: H): Agent {
    let a = this.#agents.get(host.ns);
    if (!a) {
      const child = this.#spawn(host, [Deno.execPath(), "run", "-A", AGENT]);
      a = {
        child,
        input: child.stdin.getWriter(),
        lines: child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader(),
      };
      this.#agents.set(host.ns, a);
    }
    return a;
  }

  /** Stops listening, closes the connections and ends the agents (by pid). */
  async close(): Promise<void> {
    for (const l of this.#listeners) closeQuietly(l);
    for (const c of this.#conns) closeQuietly(c);
    for (const a of this.#agents.values()) {
      await a.input.close().catch(() => {});
      try {
        a.child.kill("SIGKILL");
      } catch {
        // already exited
      }
      await a.child.status;
      await a.lines.cancel().catch(() => {});
    }
    this.#agents.clear();
    if (this.#dir) await Deno.remove(await this.#dir, { recursive: true }).catch(() => {});
  }

  /** For exit hooks: kills the agents now; their stdin closing would end them as well. */
  killSync(): void {
    for (const l of this.#listeners) closeQuietly(l);
    for (const a of this.#agents.values()) {
      try {
        a.child.kill("SIGKILL");
      } catch {
        // already exited
      }
    }
  }
}
