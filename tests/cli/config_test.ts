import assert from "node:assert/strict";
import { ConfigError, parseCommand } from "../../core/config/mod.ts";
import { Procs } from "../../testing/procs.ts";

const noFile = (p: string): string => {
  throw new Error(`no such file ${p}`);
};
const parse = (args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}) => {
  const r = parseCommand(args, env, (p) => p in files ? files[p] : noFile(p));
  if (r.help) throw new Error("unexpected help");
  return r.config;
};

Deno.test("defaults: no role runs the local cluster on 7100 with the admin API on 8080", () => {
  const c = parse([]);
  assert.equal(c.role, null);
  assert.equal(c.port, 7100);
  assert.equal(c.adminPort, 8080);
  assert.equal(c.host, "127.0.0.1");
  assert.equal(c.kv, "data/seamless.kv");
  assert.equal(c.maxFrame, 16 * 1024 * 1024);
  assert.equal(c.cellapps, 2);
  assert.equal(c.baseapps, 1);
  assert.equal(parse(["--role=cell"]).port, 0, "cellapps pick a free port by default");
});

Deno.test("roles and their aliases", () => {
  for (
    const [flag, role] of [
      ["mgr", "cellappmgr"],
      ["cellappmgr", "cellappmgr"],
      ["cell", "cellapp"],
      ["cellapp", "cellapp"],
      ["base", "baseapp"],
      ["baseapp", "baseapp"],
    ]
  ) {
    assert.equal(parse([`--role=${flag}`]).role, role);
  }
});

Deno.test("a flag beats its environment variable, which beats the config file", () => {
  const files = { "c.json": JSON.stringify({ port: 1, adminPort: 2, logLevel: "warn", secret: "file" }) };
  const env = { SEAMLESS_PORT: "3", SEAMLESS_CONFIG: "c.json", SEAMLESS_SECRET: "env" };
  const c = parse(["--port=4"], env, files);
  assert.equal(c.port, 4);
  assert.equal(c.adminPort, 2);
  assert.equal(c.logLevel, "warn");
  assert.equal(c.secret, "env");
  assert.equal(parse([], env, files).port, 3);
  assert.equal(parse(["--config=c.json"], {}, files).port, 1);
  assert.equal(parse([], {}, files).publicHost, null);
  assert.equal(parse(["--public-host=game.example.com"], {}, files).publicHost, "game.example.com");
  assert.equal(parse([], { SEAMLESS_PUBLIC_HOST: "[fd00::5]" }, files).publicHost, "fd00::5");
});

Deno.test("bad flags, variables and config files name what is wrong", () => {
  const cases: [string[], Record<string, string>, Record<string, string>, RegExp][] = [
    [["--role=king"], {}, {}, /^--role: unknown role "king"/],
    [["--bogus=1"], {}, {}, /^--bogus: unknown flag/],
    [["--port=http"], {}, {}, /^--port: "http" is not a port number/],
    [["--port=70000"], {}, {}, /^--port: "70000" is not a port number/],
    [["--admin-port=-1"], {}, {}, /^--admin-port: /],
    [["--mgr=nowhere"], {}, {}, /^--mgr: "nowhere" is not a HOST:PORT address/],
    [["--mgr=127.0.0.1:0"], {}, {}, /^--mgr: .*port 0/],
    [["--log-level=loud"], {}, {}, /^--log-level: "loud" is not a log level/],
    [["--log-format=yaml"], {}, {}, /^--log-format: "yaml" is not a log format; expected text or json/],
    [[], { SEAMLESS_LOG_FORMAT: "xml" }, {}, /^SEAMLESS_LOG_FORMAT: "xml" is not a log format/],
    [["--config=c.json"], {}, { "c.json": '{"logFormat": "csv"}' }, /^c.json: "logFormat": "csv" is not a log format/],
    [["--max-frame=10"], {}, {}, /^--max-frame: /],
    [["--port"], {}, {}, /^--port: /],
    [["--public-host=ws://game.example.com"], {}, {}, /^--public-host: .* is not a host name/],
    [["--public-host=game.example.com:9000"], {}, {}, /^--public-host: .* is not a host name/],
    [["--public-host=0.0.0.0"], {}, {}, /^--public-host: .* is not a host name/],
    [["stray"], {}, {}, /^stray: unexpected argument/],
    [[], { SEAMLESS_PORT: "x" }, {}, /^SEAMLESS_PORT: "x" is not a port number/],
    [[], { SEAMLESS_ROLE: "boss" }, {}, /^SEAMLESS_ROLE: unknown role/],
    [["--config=c.json"], {}, { "c.json": "{not json" }, /^--config: cannot read c.json as JSON/],
    [["--config=c.json"], {}, { "c.json": "[1]" }, /^--config: c.json must hold a JSON object/],
    [["--config=c.json"], {}, { "c.json": '{"colour": 1}' }, /^--config: c.json: unknown key "colour"/],
    [["--config=c.json"], {}, { "c.json": '{"port": "x"}' }, /^c.json: "port": "x" is not a port number/],
    [["--config=missing.json"], {}, {}, /^--config: cannot read missing.json/],
  ];
  for (const [args, env, files, re] of cases) {
    assert.throws(
      () => parse(args, env, files),
      (e) => e instanceof ConfigError && re.test(e.message),
      `${args.join(" ")} ${JSON.stringify(env)}`,
    );
  }
});

Deno.test(
  "main.ts exits non-zero with one line naming the flag",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    await using procs = new Procs();
    const cases: [string[], RegExp][] = [
      [["--role=king"], /^error: --role: unknown role "king"/],
      [["--frobnicate"], /^error: --frobnicate: unknown flag/],
      [["--role=cell", "--port=abc"], /^error: --port: "abc" is not a port number/],
      [["--role=cell", "--log-format=pretty"], /^error: --log-format: "pretty" is not a log format/],
    ];
    await Promise.all(cases.map(async ([args, re]) => {
      const p = await procs.start(args, { noReady: true });
      const status = await p.status;
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(status.code, 2, `${args.join(" ")}`);
      const lines = p.stderr.filter((l) => l.trim() !== "");
      assert.equal(lines.length, 1, `one line for ${args.join(" ")}: ${lines.join(" | ")}`);
      assert.match(lines[0], re);
    }));
    // A port already taken names the flag too.
    const busy = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    try {
      const p = await procs.start(["--role=mgr", `--port=${busy.addr.port}`, "--admin-port=0"], { noReady: true });
      assert.equal((await p.status).code, 1);
      await new Promise((r) => setTimeout(r, 20));
      assert.match(p.stderr.join("\n"), /error: --port: 127.0.0.1:\d+ is already in use/);
    } finally {
      busy.close();
    }
  },
);

Deno.test("--log-format: text by default; json from the flag, the variable or the config key", () => {
  assert.equal(parse([], {}, {}).logFormat, "text");
  assert.equal(parse(["--log-format=json"], {}, {}).logFormat, "json");
  assert.equal(parse([], { SEAMLESS_LOG_FORMAT: "json" }, {}).logFormat, "json");
  assert.equal(parse(["--config=c.json"], {}, { "c.json": '{"logFormat": "json"}' }).logFormat, "json");
});
