/**
 * The database contract: the same cases run against Deno KV (in memory) and a real PostgreSQL server, each case on a
 * fresh database.
 */
import assert from "node:assert/strict";
import { type Db, type DbKey, isDbUnavailable, openDb, openDenoKv, redactUrl, withDbRetry } from "../../core/db/mod.ts";
import { decodeKey, encodeKey } from "../../core/db/key_codec.ts";
import { PgServer, skipWithoutPostgres } from "../../testing/postgres.ts";
import { waitFor } from "../../testing/wait.ts";

type Open = () => Promise<Db>;
/** What a backend does differently (the contract allows it). */
interface Backend {
  /** An expired entry reads as absent at once (PostgreSQL), not only once swept (Deno KV: within a minute). */
  expiresOnRead: boolean;
}

async function all(db: Db, prefix: DbKey): Promise<DbKey[]> {
  const out: DbKey[] = [];
  for await (const e of db.list(prefix)) out.push(e.key);
  return out;
}

const CASES: Record<string, (open: Open, backend: Backend) => Promise<void>> = {
  "get, set and delete": async (open) => {
    const db = await open();
    const none = await db.get(["a", 1]);
    assert.deepEqual([none.value, none.versionstamp], [null, null]);
    const r = await db.set(["a", 1], { x: 1 });
    assert(r.ok);
    const got = await db.get<{ x: number }>(["a", 1]);
    assert.deepEqual(got.value, { x: 1 });
    assert.deepEqual(got.versionstamp, r.versionstamp);
    assert.match(got.versionstamp!, /^[0-9a-f]{20}$/);
    await db.delete(["a", 1]);
    assert.deepEqual((await db.get(["a", 1])).value, null);
    await db.close();
  },

  "values keep their types": async (open) => {
    const db = await open();
    const value = {
      bytes: new Uint8Array([0, 1, 255]),
      s: "héllo\0",
      n: -1.5,
      big: 2 ** 40 + 3,
      neg: -(2 ** 45),
      t: true,
      nil: null,
      list: [1, "two", [3], { four: 4 }],
      nested: { a: { b: { c: "d" } } },
    };
    await db.set(["v"], value);
    const got = (await db.get<typeof value>(["v"])).value!;
    assert.deepEqual(got, value);
    assert(got.bytes instanceof Uint8Array);
    await db.set(["s"], "plain");
    assert.deepEqual((await db.get(["s"])).value, "plain");
    await db.set(["n"], 42);
    assert.deepEqual((await db.get(["n"])).value, 42);
    await db.close();
  },

  "getMany answers in order, missing keys as null": async (open) => {
    const db = await open();
    await db.set(["m", 1], "one");
    await db.set(["m", 3], "three");
    const got = await db.getMany<[string, string, string]>([["m", 3], ["m", 2], ["m", 1]]);
    assert.deepEqual(got.map((e) => e.value), ["three", null, "one"]);
    assert.deepEqual(got.map((e) => e.key), [["m", 3], ["m", 2], ["m", 1]]);
    assert.deepEqual(got[1].versionstamp, null);
    await db.close();
  },

  "list gives the keys under a prefix in key order": async (open) => {
    const db = await open();
    const keys: DbKey[] = [
      ["p", true],
      ["p", 10],
      ["p", "b"],
      ["p", 1n],
      ["p", -1],
      ["p", "a"],
      ["p", 2],
      ["p", new Uint8Array([1])],
      ["p", "a", 1],
      ["p", -2n],
      ["p", false],
    ];
    for (const k of keys) await db.set(k, 1);
    // Not under ["p"]: the prefix itself, a longer string, another first part.
    await db.set(["p"], 0);
    await db.set(["pp", 1], 0);
    await db.set(["q", 1], 0);
    await db.set(["p\0", 1], 0);
    assert.deepEqual(await all(db, ["p"]), [
      ["p", new Uint8Array([1])],
      ["p", "a"],
      ["p", "a", 1],
      ["p", "b"],
      ["p", -2n],
      ["p", 1n],
      ["p", -1],
      ["p", 2],
      ["p", 10],
      ["p", false],
      ["p", true],
    ]);
    assert.deepEqual(await all(db, ["p", "a"]), [["p", "a", 1]]);
    assert.deepEqual(await all(db, ["none"]), []);
    await db.close();
  },

  "a commit whose check fails changes nothing": async (open) => {
    const db = await open();
    const first = await db.atomic().check({ key: ["c"], versionstamp: null }).set(["c"], 1).commit();
    assert(first.ok);
    // The key exists now: "absent" no longer holds, and neither write of this commit happens.
    const again = await db.atomic().check({ key: ["c"], versionstamp: null }).set(["c"], 2).set(["d"], 2).commit();
    assert.deepEqual(again.ok, false);
    const e = await db.get<number>(["c"]);
    assert.deepEqual(e.value, 1);
    assert.deepEqual((await db.get(["d"])).value, null);
    // The entry as read passes as its own check; after another write it does not.
    assert((await db.atomic().check(e).set(["c"], 3).commit()).ok);
    assert.deepEqual((await db.atomic().check(e).set(["c"], 4).commit()).ok, false);
    assert.deepEqual((await db.get(["c"])).value, 3);
    // A delete in a failed commit does not happen either.
    assert.deepEqual((await db.atomic().check(e).delete(["c"]).commit()).ok, false);
    assert.deepEqual((await db.get(["c"])).value, 3);
    await db.close();
  },

  "versionstamps grow, one per commit": async (open) => {
    const db = await open();
    const a = await db.set(["x"], 1);
    const b = await db.atomic().set(["x"], 2).set(["y"], 2).commit();
    assert(a.ok && b.ok);
    assert(b.versionstamp > a.versionstamp, `${b.versionstamp} after ${a.versionstamp}`);
    assert.deepEqual((await db.get(["x"])).versionstamp, b.versionstamp);
    assert.deepEqual((await db.get(["y"])).versionstamp, b.versionstamp);
    await db.close();
  },

  "max raises a counter and never lowers it": async (open) => {
    const db = await open();
    assert((await db.atomic().max(["hw"], 5n).commit()).ok);
    assert.deepEqual((await db.get(["hw"])).value, 5n);
    await db.atomic().max(["hw"], 3n).commit();
    assert.deepEqual((await db.get(["hw"])).value, 5n);
    await db.atomic().max(["hw"], 9n).max(["hw"], 7n).set(["other"], "x").commit();
    assert.deepEqual((await db.get(["hw"])).value, 9n);
    await db.atomic().max(["hw"], 2n ** 53n + 1n).commit();
    assert.deepEqual((await db.get(["hw"])).value, 2n ** 53n + 1n);
    await db.close();
  },

  "an expiring entry is there until it expires, then gone": async (open, backend) => {
    const db = await open();
    await db.set(["exp"], "soon", { expireIn: 300 });
    await db.atomic().check({ key: ["exp2"], versionstamp: null }).set(["exp2"], 1, { expireIn: 300 }).commit();
    await db.set(["keep"], "kept");
    assert.deepEqual((await db.get(["exp"])).value, "soon");
    assert.deepEqual((await db.get(["exp2"])).value, 1);
    if (!backend.expiresOnRead) {
      // Deno KV sweeps expired keys about once a minute: waiting for it would take most of the suite's time.
      await db.close();
      return;
    }
    await waitFor(
      "the entries to expire",
      async () => {
        const [a, b] = await db.getMany([["exp"], ["exp2"]]);
        return a.value === null && b.value === null;
      },
      20_000,
      100,
    );
    assert.deepEqual(await all(db, ["exp"]), []);
    // An expired key counts as absent for a check.
    assert((await db.atomic().check({ key: ["exp2"], versionstamp: null }).set(["exp2"], 2).commit()).ok);
    assert.deepEqual((await db.get(["keep"])).value, "kept");
    await db.close();
  },

  "of concurrent commits checking one key, exactly one wins": async (open) => {
    // Two handles, as two processes would have (a shared Deno KV file says "database is locked": retried).
    const dbs = [await open(), await open()];
    const results = await Promise.all(
      Array.from(
        { length: 12 },
        (_, i) =>
          withDbRetry(() => dbs[i % 2].atomic().check({ key: ["race"], versionstamp: null }).set(["race"], i).commit()),
      ),
    );
    assert.deepEqual(results.filter((r) => r.ok).length, 1);
    const winner = results.findIndex((r) => r.ok);
    assert.deepEqual((await dbs[0].get(["race"])).value, winner);
    // Read-check-write increments from two connections lose no update.
    await Promise.all(Array.from({ length: 16 }, async (_, i) => {
      const db = dbs[i % 2];
      for (;;) {
        const e = await withDbRetry(() => db.get<number>(["count"]));
        if ((await withDbRetry(() => db.atomic().check(e).set(["count"], (e.value ?? 0) + 1).commit())).ok) return;
      }
    }));
    assert.deepEqual((await dbs[1].get(["count"])).value, 16);
    for (const db of dbs) await db.close();
  },

  "large values and many writes in one commit": async (open) => {
    const db = await open();
    const big = new Uint8Array(60_000).map((_, i) => (i * 7) & 0xff);
    const op = db.atomic();
    for (let i = 0; i < 10; i++) op.set(["big", i], big);
    assert((await op.commit()).ok);
    const got = await db.getMany<Uint8Array[]>(Array.from({ length: 10 }, (_, i) => ["big", i]));
    for (const e of got) assert.deepEqual(e.value, big);
    await db.close();
  },

  "keys with zero bytes, empty strings and extreme numbers": async (open) => {
    const db = await open();
    const keys: DbKey[] = [
      ["k", ""],
      ["k", "\0"],
      ["k", "a\0b"],
      ["k", "a"],
      ["k", "ü字😀"],
      ["k", new Uint8Array([])],
      ["k", new Uint8Array([0, 0xff, 0])],
      ["k", -Number.MAX_VALUE],
      ["k", -0.5],
      ["k", 0],
      ["k", Number.MAX_SAFE_INTEGER],
      ["k", Infinity],
      ["k", -(2n ** 63n)],
      ["k", 2n ** 63n - 1n],
    ];
    for (const [i, k] of keys.entries()) await db.set(k, i);
    for (const [i, k] of keys.entries()) assert.deepEqual((await db.get(k)).value, i, JSON.stringify(k, big));
    const listed = await all(db, ["k"]);
    assert.deepEqual(listed.length, keys.length);
    // Strings: "" < "\0" < "a" < "a\0b"; bytes before strings; numbers ascending.
    const strings = listed.filter((k) => typeof k[1] === "string").map((k) => k[1]);
    assert.deepEqual(strings, ["", "\0", "a", "a\0b", "ü字😀"]);
    const numbers = listed.filter((k) => typeof k[1] === "number").map((k) => k[1]);
    assert.deepEqual(numbers, [-Number.MAX_VALUE, -0.5, 0, Number.MAX_SAFE_INTEGER, Infinity]);
    await db.close();
  },
};

function big(_k: string, v: unknown): unknown {
  return typeof v === "bigint" ? `${v}n` : v;
}

Deno.test("db contract: Deno KV", async (t) => {
  for (const [name, run] of Object.entries(CASES)) {
    await t.step(name, async () => {
      // Each case its own database: a temporary file, which two handles can share (":memory:" cannot).
      const dir = await Deno.makeTempDir({ prefix: "seamless-kv-" });
      try {
        await run(() => openDenoKv(`${dir}/db.kv`), { expiresOnRead: false });
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  }
});

Deno.test({
  name: "db contract: PostgreSQL",
  ignore: skipWithoutPostgres(),
  fn: async (t) => {
    await using pg = await PgServer.start();
    let n = 0;
    for (const [name, run] of Object.entries(CASES)) {
      await t.step(name, async () => {
        const url = await pg.createDatabase(`contract_${++n}`);
        await run(() => openDb({ kv: "", db: url }), { expiresOnRead: true });
      });
    }
  },
});

Deno.test({
  name: "PostgreSQL: an unreachable server is a DbUnavailableError, and the same handle works once it is back",
  ignore: skipWithoutPostgres(),
  fn: async () => {
    await using pg = await PgServer.start();
    const db = await openDb({ kv: "", db: pg.url });
    await db.set(["a"], 1);
    await pg.stop();
    const e = await db.get(["a"]).then(() => null, (e) => e);
    assert(isDbUnavailable(e), `${e}`);
    assert.match((e as Error).message, /PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres is unreachable/);
    await assert.rejects(() => db.set(["a"], 2), /unreachable/);
    await pg.resume();
    assert.deepEqual((await waitFor("the database back", () => db.get(["a"]), 10_000, 100)).value, 1);
    await db.close();
  },
});

Deno.test({
  name: "openDb waits for a PostgreSQL server that starts later, one line per attempt without the password",
  ignore: skipWithoutPostgres(),
  fn: async () => {
    await using pg = await PgServer.start();
    await pg.stop();
    const lines: string[] = [];
    const url = pg.url.replace("postgres@", "postgres:s3cret@");
    const opening = openDb({ kv: "", db: url }, {
      log: { warn: (m) => lines.push(m), info: (m) => lines.push(m) },
      firstDelayMs: 100,
      maxDelayMs: 200,
    });
    await waitFor("two attempts", () => lines.length >= 2, 10_000);
    await pg.resume();
    const db = await opening;
    assert((await db.set(["x"], 1)).ok);
    await db.close();
    assert.match(
      lines[0],
      /PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres cannot be used \(attempt 1: .*ECONNREFUSED/,
    );
    assert(lines.every((l) => !l.includes("s3cret")), lines.join("\n"));
    assert.deepEqual(redactUrl("postgres://u:pw@h:5/d"), "postgres://u@h:5/d");
  },
});

Deno.test("key encoding round-trips and orders as Deno KV does", () => {
  const keys: DbKey[] = [["a", 1, "b"], [new Uint8Array([0, 1]), -0.25, 5n, true], ["\0\0", ""]];
  for (const k of keys) assert.deepEqual(decodeKey(encodeKey(k)), k);
});
