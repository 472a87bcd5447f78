/** The base's keeper of its cell entity's latest backup, which keeps it as bytes and decodes it when read. */
import assert from "node:assert/strict";
import type { CellBackup } from "../../core/wire/mod.ts";
import { CellBackupKeeper } from "../../base/cell_link/cell_backup.ts";

const backup = (epoch: number, id = 7): CellBackup => ({
  spaceId: 2,
  epoch,
  entity: {
    id,
    type: "Avatar",
    position: [1, 0, 3],
    direction: [0.5, 0, 0],
    isOnGround: true,
    props: new Uint8Array([9, 8, 7]),
    controllers: [{ kind: "timer", id: 1, interval: 0.5 }],
    nextControllerId: 2,
    clientCallSeq: 4,
  },
});

Deno.test("the keeper gives back what it kept, as of when it kept it; another entity's backup is refused", () => {
  const keeper = new CellBackupKeeper(7);
  assert.equal(keeper.has, false);
  assert.equal(keeper.latest, null);

  const first = backup(1);
  assert.equal(keeper.keep(first), true);
  // What it kept is a snapshot: changing the object it was given afterwards changes nothing kept.
  first.entity.position[0] = 99;
  (first.entity.props as Uint8Array)[0] = 0;
  const got = keeper.latest!;
  assert.deepEqual(got, backup(1));
  assert.notEqual(keeper.latest, got, "each read decodes a new object");

  assert.equal(keeper.keep(backup(2, 8)), false);
  assert.deepEqual(keeper.stats, { kept: 1, refused: 1 });
  assert.equal(keeper.latest!.epoch, 1);

  assert.equal(keeper.keep(backup(3)), true);
  assert.equal(keeper.latest!.epoch, 3);
  keeper.clear();
  assert.equal(keeper.has, false);
  assert.equal(keeper.latest, null);
});
