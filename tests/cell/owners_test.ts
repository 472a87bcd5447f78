import assert from "node:assert/strict";
import { ByteWriter } from "../../core/def/mod.ts";
import { resetScratch, scratch } from "../../core/scratch.ts";
import { beginTick, deferFlush, inTick } from "../../core/wire/mod.ts";
import { Cell } from "../../cell/cell.ts";
import { enterLoop, sectionDepth } from "../../cell/load/entity_load.ts";
import { historyOf } from "../../cell/witness/event_history.ts";
import { frameOf } from "../../cell/witness/frame_arena.ts";
import { configureSpaceAoI, Witness, WITNESS_DEFAULTS, witnessesOf, witnessOf } from "../../cell/witness/witness.ts";
import { registry } from "../../entities/mod.ts";
import { loneCell } from "../../testing/lone_cell.ts";

function makeCell(spaceId: number): Cell {
  return loneCell({ registry, spaceId, bounds: [0, 0, 1000, 1000], firstId: spaceId * 1000 }).cell;
}

Deno.test("two cells of one process share no witness state: each keeps its witnesses, AoI defaults, histories", () => {
  const a = makeCell(1), b = makeCell(2);
  configureSpaceAoI(a, { aoiRadius: 40 });
  assert.equal(a.spaceSettings.aoiRadius, 40);
  assert.equal(b.spaceSettings.aoiRadius, WITNESS_DEFAULTS.aoiRadius, "the other cell keeps the defaults");

  const ea = a.createEntity("Avatar", { x: 10, y: 0, z: 10 }, { playerName: "a" });
  const eb = b.createEntity("Avatar", { x: 10, y: 0, z: 10 }, { playerName: "b" });
  const w = new Witness(ea, {}, () => {});
  assert.equal(ea.witness, w);
  assert.equal(witnessOf(ea), w);
  assert.equal(w.aoiRadius, 40, "the witness takes its cell's AoI default");
  assert.deepEqual([...witnessesOf(a)], [w]);
  assert.equal(b.witnesses.size, 0);
  assert.equal(eb.witness, null);
  assert.throws(() => new Witness(ea, {}, () => {}), /already has a witness/);

  assert.equal(historyOf(ea), ea.history, "the witness made its entity's history, kept on the entity");
  assert.equal(eb.history, null);
  assert.equal(ea.ownClient, ea.ownClient, "client callers are made once");
  assert.notEqual(ea.clientCallers, null);
  assert.equal(eb.clientCallers, null);

  w.destroy();
  assert.equal(ea.witness, null);
  assert.equal(witnessOf(ea), undefined);
  assert.equal(a.witnesses.size, 0);
});

Deno.test("resetScratch puts the process scratch back: no tick open, nothing charged, a fresh arena, rows kept", () => {
  beginTick();
  deferFlush({ flush: () => assert.fail("a reset drops what the tick held") });
  enterLoop();
  const w = new ByteWriter(16);
  w.u8(7);
  frameOf(w);
  const e = makeCell(3).createEntity("Avatar", { x: 12, y: 0, z: 34 }, { playerName: "kept" });
  assert.ok(inTick());
  assert.equal(sectionDepth(), 1);
  assert.ok(scratch.arena.used > 0);

  resetScratch();
  assert.ok(!inTick());
  assert.equal(sectionDepth(), 0);
  assert.equal(scratch.outbox.dirty.length, 0);
  assert.equal(scratch.arena.used, 0);
  assert.deepEqual([e.x, e.z], [12, 34], "the rows belong to the entities alive and are kept");
});
