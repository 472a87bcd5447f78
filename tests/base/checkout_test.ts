/**
 * The checkout contract on both database backends (Deno KV, a real PostgreSQL): of two baseapps claiming one
 * entity at once exactly one wins, each claim raises the generation, only the holder of the current generation
 * gives it back, and a base restored from backup gives way to a live baseapp that claimed it since.
 */
import assert from "node:assert/strict";
import { type Db, openDb, openDenoKv } from "../../core/db/mod.ts";
import { type CheckoutHolder, Checkouts } from "../../base/persist/checkout.ts";
import { checkOutRestored } from "../../base/login/checkout_route.ts";
import { EntityStore, type StoredEntity } from "../../base/persist/storage.ts";
import type { BaseAppInfo } from "../../core/wire/mod.ts";
import { PgServer, skipWithoutPostgres } from "../../testing/postgres.ts";

const holder = (baseapp: number): CheckoutHolder => ({ baseapp, address: `127.0.0.1:${4000 + baseapp}` });
const entity = (x: number): StoredEntity => ({
  type: "Avatar",
  base: new Uint8Array([x]),
  cell: new Uint8Array(0),
  position: [x, 0, 0],
  direction: [0, 0, 0],
  spaceId: 1,
});
const info = (baseapp: number): BaseAppInfo => ({ id: baseapp, address: holder(baseapp).address, clientUrl: null });

/** The cases, each given two handles on one fresh database (two baseapps' connections). */
const CASES: Record<string, (a: Db, b: Db) => Promise<void>> = {
  "two claims of one entity at once: exactly one wins, at generation 1; the loser reads the winner": async (a, b) => {
    const one = new Checkouts(a, () => holder(1)), two = new Checkouts(b, () => holder(2));
    const [seen1, seen2] = await Promise.all([one.read(7), two.read(7)]);
    assert.equal(seen1.value, null);
    const got = await Promise.all([one.claim(7, seen1), two.claim(7, seen2)]);
    assert.equal(got.filter((g) => g !== null).length, 1, `exactly one claim wins: ${JSON.stringify(got)}`);
    const winner = got[0] !== null ? 1 : 2;
    const now = (await two.read(7)).value!;
    assert.deepEqual(now.holder, holder(winner));
    assert.equal(now.generation, 1);
    assert.equal((winner === 1 ? one : two).generation(7), 1);
    assert.equal((winner === 1 ? two : one).generation(7), undefined);
  },
  "a release by a baseapp that is not the holder changes nothing; the holder's keeps the generation": async (a, b) => {
    const one = new Checkouts(a, () => holder(1)), two = new Checkouts(b, () => holder(2));
    assert.equal(await one.claim(8, await one.read(8)), 1);
    assert.equal(await two.release(8), false, "two never held it");
    assert.deepEqual((await two.read(8)).value?.holder, holder(1));
    assert.equal(await one.release(8), true);
    const back = (await two.read(8)).value!;
    assert.equal(back.holder, null);
    assert.equal(back.generation, 1, "the generation stays, for the next claim to raise");
    assert.equal(await two.claim(8, await two.read(8)), 2);
  },
  "a holder whose checkout was claimed over (it died, or stalled) gives back nothing of the new holder's": async (
    a,
    b,
  ) => {
    const one = new Checkouts(a, () => holder(1)), two = new Checkouts(b, () => holder(2));
    assert.equal(await one.claim(9, await one.read(9)), 1);
    assert.equal(await two.claim(9, await two.read(9)), 2);
    assert.equal(await one.release(9), false);
    const now = (await one.read(9)).value!;
    assert.deepEqual(now.holder, holder(2));
    assert.equal(now.generation, 2);
  },
  "a claim over a stale read is refused (null), and a fresh read then wins": async (a, b) => {
    const one = new Checkouts(a, () => holder(1)), two = new Checkouts(b, () => holder(2));
    const stale = await one.read(10);
    assert.equal(await two.claim(10, await two.read(10)), 1);
    assert.equal(await one.claim(10, stale), null);
    assert.equal(await one.claim(10, await one.read(10)), 2);
  },
  "a base restored from backup claims its dead baseapp's checkout, and gives way to a live one's": async (a, b) => {
    const dead = new Checkouts(a, () => holder(1));
    const restorer = new Checkouts(b, () => holder(3));
    assert.equal(await dead.claim(11, await dead.read(11)), 1);
    const live = () => [info(2), info(3)];
    assert.equal(await checkOutRestored({ checkouts: restorer, live }, 11, 1), null);
    assert.deepEqual((await restorer.read(11)).value?.holder, holder(3));
    assert.equal(restorer.generation(11), 2);

    // Entity 12: baseapp 2 (live) logged it in after its baseapp 1 died, before the backup was restored.
    const other = new Checkouts(a, () => holder(2));
    assert.equal(await dead.claim(12, await dead.read(12)), 1);
    assert.equal(await other.claim(12, await other.read(12)), 2);
    const why = await checkOutRestored({ checkouts: restorer, live }, 12, 1);
    assert.match(why ?? "", /entity 12 \(generation 2, baseapp 2 at 127\.0\.0\.1:4002\) was checked out to live/);
    assert.deepEqual((await restorer.read(12)).value?.holder, holder(2), "left to the live holder");
  },
};

CASES["a base whose checkout another baseapp claimed since writes nothing; the others of its group are saved"] = async (
  a,
  b,
) => {
  const one = new Checkouts(a, () => holder(1)), two = new Checkouts(b, () => holder(2));
  const store = new EntityStore(a);
  store.holderCheck = (id) => one.heldCheck(id);
  assert.equal(await one.claim(13, await one.read(13)), 1);
  assert.equal(await one.claim(14, await one.read(14)), 1);
  await store.save(13, entity(1));
  assert.equal(await two.claim(13, await two.read(13)), 2);
  // Both in one turn: one group, whose commit fails on 13's checkout; each is then saved alone.
  const [lost, kept] = await Promise.allSettled([store.save(13, entity(2)), store.save(14, entity(3))]);
  assert.equal(lost.status, "rejected");
  assert.match(
    String((lost as PromiseRejectedResult).reason),
    /entity 13 was not saved: its account was checked out to another base since this one claimed it/,
  );
  assert.equal(kept.status, "fulfilled");
  assert.deepEqual((await store.load(13))?.position, [1, 0, 0], "what the holder before saved");
  assert.deepEqual((await store.load(14))?.position, [3, 0, 0]);
};

Deno.test("checkout contract: Deno KV", async (t) => {
  for (const [name, run] of Object.entries(CASES)) {
    await t.step(name, async () => {
      // Two handles on one file, as two baseapp processes have (":memory:" cannot be shared).
      const dir = await Deno.makeTempDir({ prefix: "seamless-checkout-" });
      try {
        await using a = await openDenoKv(`${dir}/db.kv`);
        await using b = await openDenoKv(`${dir}/db.kv`);
        await run(a, b);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    });
  }
});

Deno.test({
  name: "checkout contract: PostgreSQL",
  ignore: skipWithoutPostgres(),
  fn: async (t) => {
    await using pg = await PgServer.start();
    let n = 0;
    for (const [name, run] of Object.entries(CASES)) {
      await t.step(name, async () => {
        const url = await pg.createDatabase(`checkout_${++n}`);
        await using a = await openDb({ kv: "", db: url });
        await using b = await openDb({ kv: "", db: url });
        await run(a, b);
      });
    }
  },
});
