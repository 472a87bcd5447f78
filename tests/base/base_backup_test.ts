/** Base backups: which baseapp holds a base's backup, what it keeps, and the one resume token a restored base takes. */
import assert from "node:assert/strict";
import { BaseBackups } from "../../base/backup/base_backup.ts";
import { type BaseRestoreHost, restoreBase } from "../../base/backup/mod.ts";
import { testRegistry } from "./fixtures.ts";
import { backupTarget, type BaseAppInfo, type BaseBackup } from "../../core/wire/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

const app = (id: number): BaseAppInfo => ({ id, address: `127.0.0.1:${1000 + id}`, clientUrl: `ws://x:${id}/` });

const backup = (entityId: number, tokenNonce: string | null = null): BaseBackup => ({
  entityId,
  type: "Avatar",
  account: `acc${entityId}`,
  base: new Uint8Array(),
  cell: null,
  spaceId: 1,
  cellapp: null,
  position: [0, 0, 0],
  direction: [0, 0, 0],
  tokenNonce,
});

/** The backups of baseapp `selfId` (none of its own bases: it only holds). */
function holder(selfId: number): BaseBackups & Disposable {
  const b = new BaseBackups({
    log: memoryLogger(),
    selfId: () => selfId,
    bases: () => [],
    send: () => Promise.resolve(),
  });
  return Object.assign(b, { [Symbol.dispose]: () => b.close() });
}

Deno.test("a base's backup goes to another live baseapp by a hash of its id, spread over them; none when alone", () => {
  const live = [app(1), app(2), app(3), app(4)];
  const count = new Map<number, number>();
  for (let id = 1; id <= 3000; id++) {
    const t = backupTarget(id, live, 2);
    assert.ok(t && t.id !== 2, "never itself");
    assert.equal(backupTarget(id, live, 2), t, "the same every time");
    count.set(t.id, (count.get(t.id) ?? 0) + 1);
  }
  for (const id of [1, 3, 4]) assert.ok(count.get(id)! > 800, `baseapp ${id} holds its share: ${count.get(id)}`);
  assert.equal(backupTarget(7, [app(2)], 2), null);
});

Deno.test("a restored base takes the last token its old baseapp gave, once; an older one is refused", async () => {
  using b = holder(3);
  b.setLive([app(2), app(3)]);
  b.keep(app(2).address, backup(10, "n-last"));
  b.keep(app(2).address, backup(11, null));
  const dead = b.takeOf(app(2).address);
  assert.deepEqual(dead.map((d) => d.entityId).sort(), [10, 11]);
  assert.equal(b.heldCount, 0, "taken backups are no longer held");
  for (const d of dead) b.awaitResume(d.entityId, d.tokenNonce);

  assert.match((await b.checkResume(10, "n-older", 0))!, /awaits its latest resume token/);
  assert.equal(await b.checkResume(10, "n-last", 0), null);
  // Backed up before its first token: any of its tokens is taken (its signature and used-nonce record still hold).
  assert.equal(await b.checkResume(11, "whatever", 0), null);
});

Deno.test("a resume of a base whose baseapp is still listed live waits for its death, then is taken", async () => {
  using b = holder(3);
  b.setLive([app(2), app(3)]);
  b.keep(app(2).address, backup(10, "n1"));
  assert.match((await b.checkResume(10, "n1", 0))!, /on the live baseapp at 127\.0\.0\.1:1002/);
  const waiting = b.checkResume(10, "n1", 5000);
  for (const d of b.takeOf(app(2).address)) b.awaitResume(d.entityId, d.tokenNonce);
  b.setLive([app(3)]);
  assert.equal(await waiting, null);
});

Deno.test("backups a baseapp no longer holds under a new live list are dropped, and so is one of a logout", () => {
  using b = holder(3);
  const before = [app(1), app(2), app(3)];
  b.setLive(before);
  const mine = Array.from({ length: 200 }, (_, i) => i + 1).filter((id) => backupTarget(id, before, 1)?.id === 3);
  for (const id of mine) b.keep(app(1).address, backup(id));
  assert.equal(b.heldCount, mine.length);
  b.drop(app(1).address, mine[0]);
  assert.equal(b.heldCount, mine.length - 1);
  const after = [...before, app(4)];
  b.setLive(after);
  const still = mine.slice(1).filter((id) => backupTarget(id, after, 1)?.id === 3);
  assert.ok(still.length < mine.length - 1, "some moved to the new baseapp");
  assert.equal(b.heldCount, still.length);
});

Deno.test("a base backup whose cell backup does not decode is refused before anything is made, naming the entity", async () => {
  const made: number[] = [];
  // Only what restoreBase reads before it makes the proxy: it must stop there.
  const host: Pick<BaseRestoreHost, "log" | "registry" | "has" | "newProxy"> = {
    log: memoryLogger(),
    registry: testRegistry,
    has: () => false,
    newProxy: (id) => {
      made.push(id);
      throw new Error("not in this test");
    },
  };
  const bad = { ...backup(12), cell: new Uint8Array([0xc1]) };
  await assert.rejects(restoreBase(host as BaseRestoreHost, bad, 2), /backup of entity 12/);
  const other = { ...backup(13), cell: new Uint8Array([0x90]) };
  await assert.rejects(restoreBase(host as BaseRestoreHost, other, 2), /backup of entity 13 refused/);
  assert.deepEqual(made, []);
});
