/**
 * A real PostgreSQL server (Debian's, version 15 here) for tests: `initdb` into a temporary folder owned by the `postgres` user, then
 * `postgres` on a free loopback port with its unix socket in that folder. It can be stopped and started again on the
 * same port and data (an outage), and is stopped by pid and its folder removed when disposed.
 */

/** Where Debian's postgresql package puts the server binaries: version 15, else the newest installed. */
export const PG_BIN: string = (() => {
  const root = "/usr/lib/postgresql";
  try {
    Deno.statSync(`${root}/15/bin/postgres`);
    return `${root}/15/bin`;
  } catch {
    try {
      const versions = [...Deno.readDirSync(root)].map((e) => Number(e.name)).filter((n) => n > 0).sort((a, b) =>
        b - a
      );
      if (versions.length) return `${root}/${versions[0]}/bin`;
    } catch {
      // not installed: postgresMissing says so
    }
    return `${root}/15/bin`;
  }
})();

/** Why a PostgreSQL server cannot be started here, or null when it can. */
export function postgresMissing(): string | null {
  try {
    Deno.statSync(`${PG_BIN}/postgres`);
    Deno.statSync(`${PG_BIN}/initdb`);
  } catch {
    return `PostgreSQL is not installed (${PG_BIN}); apt-get install postgresql`;
  }
  if (Deno.uid() !== 0) return "starting PostgreSQL as the postgres user needs root";
  if (idOf("-u") === null) return "there is no postgres user";
  return null;
}

/** The reason tests are skipped, printed once, or false to run them (for `ignore:`). */
export function skipWithoutPostgres(): boolean {
  const why = postgresMissing();
  if (why) console.log(`skipping PostgreSQL tests: ${why}`);
  return why !== null;
}

function idOf(flag: "-u" | "-g"): number | null {
  try {
    const out = new Deno.Command("id", { args: [flag, "postgres"], stdout: "piped", stderr: "null" }).outputSync();
    return out.success ? Number(new TextDecoder().decode(out.stdout).trim()) : null;
  } catch {
    return null;
  }
}

/** `pid` and every process below it (from /proc), parents first. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...children.get(ppid) ?? [], Number(e.name)]);
    } catch {
      // exited meanwhile
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...children.get(out[i]) ?? []);
  return out;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * Runs `cmd` as the postgres user (it refuses root), under the command prefix `wrap` (a test host's
 * `ip netns exec NS`); setpriv execs it, so the child's pid is the server's.
 */
function asPostgres(cmd: string, args: string[], uid: number, gid: number, wrap: string[] = []): Deno.Command {
  const [program, ...before] = [...wrap, "setpriv"];
  return new Deno.Command(program, {
    args: [...before, `--reuid=${uid}`, `--regid=${gid}`, "--init-groups", "--", cmd, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { LC_ALL: "C" },
  });
}

/** One PostgreSQL server in a temporary folder. */
export class PgServer implements AsyncDisposable {
  #child: Deno.ChildProcess | null = null;
  #log: string[] = [];

  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly uid: number,
    readonly gid: number,
    /** The address it listens on. */
    readonly host: string,
    readonly wrap: string[],
  ) {}

  /** The connection URL (the `postgres` superuser, trusted on loopback, or on the test hosts' subnet). */
  get url(): string {
    return `postgres://postgres@${this.host}:${this.port}/postgres`;
  }

  /** The server's output so far, for failure messages. */
  get log(): string {
    return this.#log.join("");
  }

  /** Whether the server process runs. */
  get running(): boolean {
    return this.#child !== null;
  }

  /**
   * Makes a cluster with initdb and starts the server on a free loopback port, or on a test host (`at`: its address,
   * the subnet it trusts, and the `ip netns exec` prefix that runs programs there).
   */
  static async start(at?: { host: string; subnet: string; wrap: string[] }): Promise<PgServer> {
    const uid = idOf("-u"), gid = idOf("-g");
    if (uid === null || gid === null) throw new Error("there is no postgres user");
    const dir = await Deno.makeTempDir({ prefix: "seamless-pg-" });
    await Deno.chown(dir, uid, gid);
    const s = at
      ? new PgServer(dir, 5432, uid, gid, at.host, at.wrap)
      : new PgServer(dir, freePort(), uid, gid, "127.0.0.1", []);
    try {
      const init = await asPostgres(
        `${PG_BIN}/initdb`,
        [
          "-D",
          `${dir}/data`,
          "-U",
          "postgres",
          "-A",
          "trust",
          "--no-sync",
          "-E",
          "UTF8",
        ],
        uid,
        gid,
      ).output();
      if (!init.success) {
        throw new Error(`initdb in ${dir} failed: ${new TextDecoder().decode(init.stderr).trim()}`);
      }
      if (at) {
        await Deno.writeTextFile(`${dir}/data/pg_hba.conf`, `host all all ${at.subnet} trust\n`, { append: true });
      }
      await s.resume();
    } catch (e) {
      await s[Symbol.asyncDispose]();
      throw e;
    }
    return s;
  }

  /** Starts the server (again) on the same port and data, and waits until it accepts connections. */
  async resume(): Promise<void> {
    if (this.#child) return;
    const child = asPostgres(
      `${PG_BIN}/postgres`,
      [
        "-D",
        `${this.dir}/data`,
        "-p",
        String(this.port),
        "-k",
        this.dir,
        "-c",
        `listen_addresses=${this.host}`,
        "-c",
        "fsync=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "max_connections=60",
        "-c",
        "shared_buffers=16MB",
      ],
      this.uid,
      this.gid,
      this.wrap,
    ).spawn();
    this.#child = child;
    const dec = new TextDecoder();
    const ready = Promise.withResolvers<void>();
    const pump = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s) {
        const t = dec.decode(chunk);
        this.#log.push(t);
        if (/ready to accept connections/.test(this.log)) ready.resolve();
      }
    };
    void pump(child.stdout);
    void pump(child.stderr);
    child.status.then((st) => {
      if (this.#child === child) this.#child = null;
      ready.reject(new Error(`postgres exited (${st.code}) before it was ready:\n${this.log}`));
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        ready.promise,
        new Promise<never>((_, rej) => {
          timer = setTimeout(() => rej(new Error(`postgres not ready after 20 s:\n${this.log}`)), 20_000);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
    this.#log.length = 0;
  }

  /** Makes a new empty database `name` (letters, digits, _) and returns its URL. */
  async createDatabase(name: string): Promise<string> {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`${name}: not a plain database name`);
    const out = await asPostgres(
      `${PG_BIN}/psql`,
      [
        "-h",
        this.dir,
        "-p",
        String(this.port),
        "-U",
        "postgres",
        "-d",
        "postgres",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        `create database ${name}`,
      ],
      this.uid,
      this.gid,
    ).output();
    if (!out.success) throw new Error(`create database ${name}: ${new TextDecoder().decode(out.stderr).trim()}`);
    return `postgres://postgres@${this.host}:${this.port}/${name}`;
  }

  /**
   * Stops (SIGSTOP) or continues (SIGCONT) the server and its backends, by pid: a server that holds its connections
   * and answers nothing, as behind a cut link.
   */
  freeze(frozen: boolean): void {
    if (!this.#child) throw new Error("the server is not running");
    const pids = descendants(this.#child.pid);
    for (const pid of frozen ? pids : pids.reverse()) {
      try {
        Deno.kill(pid, frozen ? "SIGSTOP" : "SIGCONT");
      } catch {
        // exited meanwhile
      }
    }
  }

  /** Stops the server by pid (a fast shutdown: open connections are ended) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#child = null;
    try {
      child.kill("SIGINT");
    } catch {
      // already gone
    }
    await child.status;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
