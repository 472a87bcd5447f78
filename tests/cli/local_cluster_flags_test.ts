/**
 * Every flag the local cluster accepts reaches the children that use it, or is refused with a clear error: for each
 * flag a value other than its default is given to the local cluster, and each child's command line (and
 * environment) is read back as that child would read it.
 */
import assert from "node:assert/strict";
import { type Config, parseCommand } from "../../core/config/mod.ts";
import { KEY_OF, SPECS } from "../../core/config/flags.ts";
import {
  baseappFlags,
  cellappFlags,
  cellappmgrFlags,
  childEnv,
  mgrKv,
  refusedByLocalCluster,
} from "../../cli/local_cluster.ts";

type Role = "cellappmgr" | "cellapp" | "baseapp";
const ALL: Role[] = ["cellappmgr", "cellapp", "baseapp"];

/** Where each flag goes: the roles that read it (with a value to give), the children's environment, or elsewhere. */
type Route =
  | { to: Role[]; value: string }
  | { env: string; value: string }
  | { cluster: string; value: string }
  | { refused: RegExp; value: string }
  | { not: string };

const ROUTES: Record<string, Route> = {
  role: { not: "a role runs one process, not the local cluster" },
  mgr: { refused: /--mgr=10\.0\.0\.1:7100 joins a cellappmgr elsewhere/, value: "10.0.0.1:7100" },
  host: { to: ALL, value: "127.0.0.2" },
  port: { to: ["cellappmgr"], value: "7200" },
  "admin-port": { to: ["cellappmgr"], value: "8200" },
  kv: { to: ["baseapp"], value: "/tmp/x.kv" }, // the cellappmgr gets its own beside it (checked below)
  db: { to: ["cellappmgr", "baseapp"], value: "postgres://u:p@127.0.0.1:5432/game" },
  secret: { env: "SEAMLESS_SECRET", value: "s3cret" },
  "admin-token": { env: "SEAMLESS_ADMIN_TOKEN", value: "t0ken" },
  "log-level": { to: ALL, value: "debug" },
  "log-format": { to: ALL, value: "json" },
  "max-frame": { to: ALL, value: "65536" },
  cellapps: { cluster: "how many cellapps it starts", value: "3" },
  baseapps: { cluster: "how many baseapps it starts", value: "2" },
  npcs: { to: ["cellappmgr"], value: "7" },
  "tick-hz": { to: ALL, value: "20" },
  "client-port": { to: ["baseapp"], value: "7300" },
  "public-host": { to: ["baseapp"], value: "game.example.com" },
  "auto-accounts": { to: ["baseapp"], value: "false" },
  insecure: { to: ALL, value: "true" },
  "admin-origins": { to: ["cellappmgr"], value: "https://ops.example.com" },
  "admin-hosts": { to: ["cellappmgr"], value: "ops.example.com" },
  "spawn-limit": { to: ["cellappmgr"], value: "50" },
  "entity-limit": { to: ["cellappmgr"], value: "500" },
  "abuse-limit": { to: ["baseapp"], value: "3" },
  "move-rate": { to: ["baseapp"], value: "30" },
  "header-timeout": { to: ALL, value: "2000" },
  "login-rate": { to: ["baseapp"], value: "9" },
  "client-sockets": { to: ["baseapp"], value: "deno" },
  "client-spawn": { to: ["baseapp"], value: "true" },
  autosave: { to: ["baseapp"], value: "30" },
  "orphan-timeout": { to: ["cellapp"], value: "5" },
  "mgr-lease": { to: ["cellapp", "baseapp"], value: "3000" },
  game: { to: ALL, value: "/games/arena/mod.ts" },
  history: { to: ALL, value: "/tmp/history" },
  "tls-cert": { to: ALL, value: "/certs/c.pem" },
  "tls-key": { to: ALL, value: "/certs/k.pem" },
  "tls-ca": { to: ALL, value: "/certs/ca.pem" },
  "client-url": { to: ["baseapp"], value: "wss://play.example.com/" },
  "aoi-radius": { to: ALL, value: "100" },
  "ghost-radius": { to: ALL, value: "600" },
  "restore-timeout": { to: ["cellapp"], value: "900" },
  "balance-period": { to: ["cellappmgr"], value: "0" },
  "min-cell-width": { to: ["cellappmgr"], value: "25" },
  "busy-load": { to: ["cellappmgr"], value: "0.5" },
  "idle-load": { to: ["cellappmgr"], value: "0.1" },
  "max-speed": { to: ["baseapp"], value: "12" },
  watch: { cluster: "it watches the game folder and reloads the game through the admin API", value: "true" },
};

const TLS = new Set(["tls-cert", "tls-key", "tls-ca"]);

/** Reads a command line as the program does; TLS files are not read (their paths are compared instead). */
function read(args: string[], env: Record<string, string> = {}): { config: Config; given: ReadonlySet<string> } {
  const kept = args.filter((a) => !/^--tls-(cert|key|ca)=/.test(a));
  const r = parseCommand(kept, env, (p) => {
    throw new Error(`no file ${p} here`);
  });
  assert.ok(!r.help);
  return r;
}

/** Each child's command line and environment for the local cluster given `args`. */
function children(args: string[]) {
  const { config } = read(args);
  for (const a of args) {
    const m = /^--(tls-\w+)=(.*)$/.exec(a);
    if (m) (config as unknown as Record<string, unknown>)[KEY_OF[m[1]]] = m[2];
  }
  const mgr = "127.0.0.1:7100";
  return {
    config,
    env: childEnv(config),
    args: {
      cellappmgr: cellappmgrFlags(config, config.port, config.adminPort),
      cellapp: cellappFlags(config, mgr),
      baseapp: baseappFlags(config, mgr, 0),
    } as Record<Role, string[]>,
  };
}

Deno.test("the routing table names every flag", () => {
  assert.deepEqual(Object.keys(ROUTES).sort(), Object.keys(SPECS).sort());
});

for (const [flag, route] of Object.entries(ROUTES)) {
  if ("not" in route) continue;
  Deno.test(`--${flag} given to the local cluster`, () => {
    const given = SPECS[flag].flag ? `--${flag}` : `--${flag}=${route.value}`;
    if ("refused" in route) {
      const r = read([given]);
      assert.match(refusedByLocalCluster(r.config, r.given) ?? "not refused", route.refused);
      return;
    }
    const key = KEY_OF[flag];
    const { config, env, args } = children([given]);
    if (!TLS.has(flag)) {
      assert.notDeepEqual(config[key], read([]).config[key], `${given} is not the default`);
    }
    if ("cluster" in route) {
      for (const role of ALL) assert.ok(!args[role].some((a) => a.startsWith(`--${flag}=`)), role);
      return;
    }
    if ("env" in route) {
      assert.equal(env[route.env], route.value);
      for (const role of ALL) assert.equal(read(args[role], env).config[key], route.value, role);
      return;
    }
    for (const role of route.to) {
      if (TLS.has(flag)) {
        assert.ok(args[role].includes(given), `the ${role} gets ${given}: ${args[role].join(" ")}`);
        continue;
      }
      const child = read(args[role], env).config;
      assert.deepEqual(child[key], config[key], `the ${role} gets ${given}: ${args[role].join(" ")}`);
    }
  });
}

Deno.test("the cellappmgr keeps its own Deno KV beside the baseapps' one", () => {
  const { args } = children(["--kv=/tmp/x.kv"]);
  assert.equal(read(args.cellappmgr).config.kv, mgrKv("/tmp/x.kv"));
});

Deno.test("--client-port: each of the local cluster's baseapps serves clients on its own port from it", () => {
  const { config } = read(["--client-port=7300", "--baseapps=3"]);
  const ports = [0, 1, 2].map((i) => read(baseappFlags(config, "127.0.0.1:7100", i)).config.clientPort);
  assert.deepEqual(ports, [7300, 7301, 7302]);
  assert.equal(read(baseappFlags(read([]).config, "127.0.0.1:7100", 1)).config.clientPort, 0, "0: a free port each");
  const high = read(["--client-port=65535", "--baseapps=2"]);
  assert.match(refusedByLocalCluster(high.config, high.given) ?? "", /past 65535/);
});

Deno.test("--client-url names one baseapp: refused for a local cluster of several", () => {
  const r = read(["--client-url=wss://play.example.com/", "--baseapps=2"]);
  assert.match(refusedByLocalCluster(r.config, r.given) ?? "", /--client-url names one baseapp's address/);
  const one = read(["--client-url=wss://play.example.com/"]);
  assert.equal(refusedByLocalCluster(one.config, one.given), null);
});
