/** --db: a PostgreSQL URL instead of --kv; a malformed one, or both given, stops the program with one line. */
import assert from "node:assert/strict";
import { ConfigError, parseCommand } from "../../core/config/mod.ts";
import { Procs } from "../../testing/procs.ts";

const parse = (args: string[], env: Record<string, string> = {}, files: Record<string, string> = {}) => {
  const r = parseCommand(args, env, (p) => files[p]);
  if (r.help) throw new Error("unexpected help");
  return r.config;
};

Deno.test("--db takes a postgres URL from the flag, SEAMLESS_DB or the config key db; none leaves Deno KV", () => {
  assert.equal(parse([]).db, null);
  assert.equal(parse([]).kv, "data/seamless.kv");
  assert.equal(parse(["--db=postgres://u:p@db.example:5432/game"]).db, "postgres://u:p@db.example:5432/game");
  assert.equal(parse([], { SEAMLESS_DB: "postgresql://h/g" }).db, "postgresql://h/g");
  assert.equal(parse(["--config=c.json"], {}, { "c.json": '{"db": "postgres://h:1/x"}' }).db, "postgres://h:1/x");
});

Deno.test("a malformed --db, or --db with --kv, is a ConfigError naming both sources and not the password", () => {
  for (const bad of ["localhost:5432", "mysql://h/db", "postgres://", "postgres:///nohost"]) {
    assert.throws(() => parse([`--db=${bad}`]), (e: Error) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, /^--db: not a PostgreSQL URL like postgres:\/\//);
      return true;
    }, bad);
  }
  assert.throws(() => parse(["--db=postgres://u:hunter2@h/x", "--kv=:memory:"]), (e: Error) => {
    assert.ok(e instanceof ConfigError);
    assert.match(e.message, /^--db and --kv are both set: use PostgreSQL \(--db\) or Deno KV \(--kv\), not both$/);
    return true;
  });
  assert.throws(() => parse(["--db=postgres://h/x"], { SEAMLESS_KV: "a.kv" }), /--db and SEAMLESS_KV are both set/);
});

Deno.test(
  "main.ts stops with status 2 and one line for a malformed --db and for --db with --kv",
  { sanitizeOps: false, sanitizeResources: false },
  async () => {
    await using procs = new Procs();
    const cases: [string[], RegExp][] = [
      [["--role=base", "--db=not a url:secret"], /^error: --db: not a PostgreSQL URL/],
      [["--role=base", "--db=postgres://u:pw@127.0.0.1:1/x", "--kv=:memory:"], /^error: --db and --kv are both set/],
    ];
    for (const [args, re] of cases) {
      const p = await procs.start(args, { noReady: true });
      assert.equal((await p.status).code, 2, args.join(" "));
      await new Promise((r) => setTimeout(r, 20));
      const lines = p.stderr.join("").split("\n").filter((l) => l.trim() !== "");
      assert.equal(lines.length, 1, lines.join(" | "));
      assert.match(lines[0], re);
      assert.ok(!lines[0].includes("secret") && !lines[0].includes("pw@"), lines[0]);
    }
  },
);
