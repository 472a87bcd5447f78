/**
 * A cluster for benchmarks spread over test hosts (testing/hosts.ts): the cellappmgr, each cellapp and each
 * baseapp in a network namespace of its own, bound to that namespace's address, and a client host from which bots
 * and the benchmark's admin requests come. Everything it started and made is removed when it is disposed.
 */
import { fileURLToPath } from "node:url";
import type { ClusterView } from "../core/views.ts";
import { type Host, Hosts, hostsUnavailable } from "./hosts.ts";
import { type Proc, Procs, type StartOptions } from "./procs.ts";
import { PgServer } from "./postgres.ts";

const SECRET = "bench-hosts-secret";
/** The admin token of every benchmark cluster on hosts. */
export const ADMIN_TOKEN = "bench-hosts-token";
const BOTS = fileURLToPath(new URL("../tools/bots.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../deno.json", import.meta.url));

/** What to start. */
export interface HostsClusterOptions {
  cellapps: number;
  baseapps: number;
  /** Flags for every process of a role, after the ones this module sets. */
  mgrFlags?: string[];
  cellFlags?: string[];
  baseFlags?: string[];
  /** Environment of every process. */
  env?: Record<string, string>;
  /** Put the cellappmgr and the baseapps on one PostgreSQL server on a host of its own (else each its own KV). */
  postgres?: boolean;
  /**
   * Clients run in this process (the SDK), not on the client host: each baseapp announces (`--client-url`) a loopback
   * forward to its client port, so that the URLs the servers hand out (resume redirects, the baseapp list) work here.
   */
  clientsHere?: boolean;
}

/** A running cluster on test hosts. */
export class HostsCluster implements AsyncDisposable {
  private constructor(
    readonly hosts: Hosts,
    readonly procs: Procs,
    /** The admin API as this process reaches it (through a forward from the client host). */
    readonly admin: string,
    /** The admin API's address on the cellappmgr's host, as bots on the client host reach it. */
    readonly adminOnHost: string,
    /** The cellappmgr; replaced by restart(). */
    public mgr: Proc,
    /** The cellapps and baseapps by slot (host cellN, baseN); restart() replaces one in its slot. */
    readonly cellapps: Proc[],
    readonly baseapps: Proc[],
    /** The shared database, when there is one. */
    readonly db: PgServer | null,
    /** Each baseapp's client URL as clients in this process reach it, when `clientsHere`. */
    readonly forwards: string[] | null,
    /** How each process was started, for restart(). */
    private readonly started: Map<Proc, { flags: string[]; opts: StartOptions }>,
  ) {}

  /** Why test hosts cannot be made here, or null. */
  static unavailable(): Promise<string | null> {
    return hostsUnavailable();
  }

  /** Makes the hosts, starts the processes and waits until every one is registered. */
  static async start(o: HostsClusterOptions): Promise<HostsCluster> {
    const names = [
      "mgr",
      ...Array.from({ length: o.cellapps }, (_, i) => `cell${i + 1}`),
      ...Array.from({ length: o.baseapps }, (_, i) => `base${i + 1}`),
      "client",
      ...o.postgres ? ["db"] : [],
    ];
    const hosts = await Hosts.create(names);
    const procs = new Procs();
    const started = new Map<Proc, { flags: string[]; opts: StartOptions }>();
    const start = async (flags: string[], opts: StartOptions) => {
      const p = await procs.start(flags, opts);
      started.set(p, { flags, opts });
      return p;
    };
    let db: PgServer | null = null;
    try {
      const env = { SEAMLESS_LOG_LEVEL: "warn", ...o.env };
      let dbFlags: string[] = [];
      if (o.postgres) {
        const h = hosts.get("db");
        db = await PgServer.start({ host: h.address, subnet: hosts.subnet, wrap: hosts.wrap(h) });
        dbFlags = [`--db=${await db.createDatabase("seamless")}`];
      }
      const mgrHost = hosts.get("mgr");
      const mgr = await start([
        "--role=mgr",
        `--host=${mgrHost.address}`,
        "--port=7100",
        "--admin-port=8080",
        `--secret=${SECRET}`,
        `--admin-token=${ADMIN_TOKEN}`,
        "--npcs=0",
        ...dbFlags,
        ...o.mgrFlags ?? [],
      ], { wrap: hosts.wrap(mgrHost), env });
      const mgrAddress = `${mgrHost.address}:7100`;
      const admin = await hosts.forward(hosts.get("client"), `http://${mgrHost.address}:8080`);
      const on = (h: Host, flags: string[]) =>
        start([`--host=${h.address}`, `--mgr=${mgrAddress}`, `--secret=${SECRET}`, ...flags], {
          wrap: hosts.wrap(h),
          env,
          readyTimeoutMs: 60_000,
        });
      // Started a few at a time: two cores compiling twenty processes at once would time out their handshakes.
      const cellapps: Proc[] = [];
      for (let i = 0; i < o.cellapps; i += 4) {
        cellapps.push(
          ...await Promise.all(
            Array.from(
              { length: Math.min(4, o.cellapps - i) },
              (_, j) => on(hosts.get(`cell${i + j + 1}`), ["--role=cell", "--port=7200", ...o.cellFlags ?? []]),
            ),
          ),
        );
      }
      const forwards = o.clientsHere
        ? await Promise.all(
          Array.from(
            { length: o.baseapps },
            (_, i) => hosts.forward(hosts.get("client"), `ws://${hosts.get(`base${i + 1}`).address}:7400/`),
          ),
        )
        : null;
      const baseapps: Proc[] = [];
      for (let i = 0; i < o.baseapps; i++) {
        baseapps.push(
          await on(hosts.get(`base${i + 1}`), [
            ...forwards ? [`--client-url=${forwards[i]}`] : [],
            "--role=base",
            "--port=7300",
            "--client-port=7400",
            "--client-spawn",
            "--login-rate=1000",
            "--max-speed=1000",
            ...dbFlags,
            ...o.baseFlags ?? [],
          ]),
        );
      }
      const cluster = new HostsCluster(
        hosts,
        procs,
        admin,
        `http://${mgrHost.address}:8080`,
        mgr,
        cellapps,
        baseapps,
        db,
        forwards,
        started,
      );
      await cluster.waitRegistered();
      return cluster;
    } catch (e) {
      await procs[Symbol.asyncDispose]();
      await db?.[Symbol.asyncDispose]();
      await hosts[Symbol.asyncDispose]();
      throw e;
    }
  }

  /** GETs or sends JSON to the admin API with the token; throws on a status other than 2xx. */
  async api<T>(path: string, init: RequestInit = {}): Promise<T> {
    const res = await fetch(`${this.admin}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json", ...init.headers },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return (res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text) as T;
  }

  /** Waits until every cellapp and baseapp started is registered with the cellappmgr. */
  async waitRegistered(ms = 60_000): Promise<void> {
    const until = Date.now() + ms;
    for (;;) {
      const view = await this.api<ClusterView>("/api/cluster").catch(() => null);
      const cells = view?.processes.filter((p) => p.role === "cellapp").length ?? 0;
      const bases = view?.processes.filter((p) => p.role === "baseapp" && p.clientUrl).length ?? 0;
      if (cells >= this.cellapps.length && bases >= this.baseapps.length) return;
      if (Date.now() > until) {
        throw new Error(`after ${ms} ms only ${cells} cellapps and ${bases} baseapps are registered`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Starts `deno task bots` on the client host against this cluster, with `args` (--count, --duration, …). */
  bots(args: string[]): Deno.ChildProcess {
    return this.hosts.spawn(this.hosts.get("client"), [
      Deno.execPath(),
      "run",
      "-A",
      "--config",
      CONFIG,
      BOTS,
      "--admin",
      this.adminOnHost,
      "--admin-token",
      ADMIN_TOKEN,
      "--json",
      ...args,
    ], { stdout: "piped", stderr: "piped" });
  }

  /** Loopback URLs through which SDK clients in this process reach each baseapp's client port, in order. */
  async clientUrls(): Promise<string[]> {
    if (this.forwards) return this.forwards;
    const client = this.hosts.get("client");
    return await Promise.all(
      this.baseapps.map((_, i) => this.hosts.forward(client, `ws://${this.hosts.get(`base${i + 1}`).address}:7400/`)),
    );
  }

  /**
   * Kills `p` (SIGKILL, if it still runs) and starts it again on its host with its flags, as an operator would; the
   * new process takes its place (mgr, or its slot in cellapps or baseapps). Resolves with it once it is ready.
   */
  async restart(p: Proc): Promise<Proc> {
    const how = this.started.get(p);
    if (!how) throw new Error(`pid ${p.pid} was not started by this cluster`);
    p.kill("SIGKILL");
    await p.status;
    const next = await this.procs.start(how.flags, how.opts);
    this.started.set(next, how);
    if (p === this.mgr) this.mgr = next;
    for (const list of [this.cellapps, this.baseapps]) {
      const i = list.indexOf(p);
      if (i >= 0) list[i] = next;
    }
    return next;
  }

  /** Every process's pid, the cellappmgr first. */
  get pids(): number[] {
    return this.procs.all.map((p) => p.pid);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.procs[Symbol.asyncDispose]();
    await this.db?.[Symbol.asyncDispose]();
    await this.hosts[Symbol.asyncDispose]();
  }
}
