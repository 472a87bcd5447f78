/**
 * Witnesses read the entities they send from the entities' rows (cell/witness/entity_rows.ts), which the entities'
 * own fields read and write, and hand their frames out as views of shared buffers (frame_arena.ts): what a client
 * sees must be what the entities are when each witness runs, and every frame must stay as it was sent.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { Witness, type WitnessOptions } from "../../cell/witness/witness.ts";
import { historyOf } from "../../cell/witness/event_history.ts";
import {
  R_DESTROYED,
  R_ON_GROUND,
  R_ROLL,
  R_SEQ,
  R_STATE,
  R_X,
  R_Z,
  ROW,
  rows,
} from "../../cell/witness/entity_rows.ts";
import { ClientWorld } from "../../client/world.ts";
import { loneCell } from "../../testing/lone_cell.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: { name: { type: T.string(16), flags: "ALL_CLIENTS" } },
});
const registry = createRegistry({ entities: [Walker] });

function makeCell(): Cell {
  return loneCell({ registry, bounds: [-500, -500, 500, 500] }).cell;
}

interface Client {
  witness: Witness;
  world: ClientWorld;
  /** Every frame as the sink got it, and a copy made then. */
  frames: [Uint8Array, Uint8Array][];
  /** Called from the sink, inside the witness's update. */
  onFrame: () => void;
}

function attach(e: Entity, opts: WitnessOptions = {}): Client {
  const c = { frames: [], onFrame: () => {} } as unknown as Client;
  c.world = new ClientWorld(registry, { send: (b) => c.witness.receive(b) });
  c.world.setPlayer(e.id, e.type);
  c.witness = new Witness(e, { aoiRadius: 100, hysteresis: 5, ...opts }, (f) => {
    c.frames.push([f, f.slice()]);
    c.world.receive(f);
    c.onFrame();
  });
  return c;
}

const at = (x: number, z = 0) => ({ x, y: 0, z });
const seenX = (c: Client, e: Entity) => c.world.entities.get(e.id)?.position.x ?? NaN;

Deno.test("a witness updated outside the cell's pass sees what moved since the pass", () => {
  const cell = makeCell();
  const a = cell.createEntity("Walker", at(0), { name: "a" });
  const b = cell.createEntity("Walker", at(10), { name: "b" });
  const c = cell.createEntity("Walker", at(20), { name: "c" });
  const ca = attach(a), cc = attach(c);
  for (let i = 0; i < 3; i++) cell.tick(100);
  assert.ok(Math.abs(seenX(ca, b) - 10) < 0.1 && Math.abs(seenX(cc, b) - 10) < 0.1);
  // Both witnesses copied b this tick; it moves, and the next updates come without a pass over the cell.
  b.position = at(30);
  cell.time += 100;
  ca.witness.update();
  assert.ok(Math.abs(seenX(ca, b) - 30) < 0.1, `a sees b at ${seenX(ca, b)}`);
  b.position = at(40);
  cc.witness.update();
  assert.ok(Math.abs(seenX(cc, b) - 40) < 0.1, `c sees b at ${seenX(cc, b)}`);
});

Deno.test("what a callback moves in the middle of a pass reaches the witnesses updated after it", () => {
  const cell = makeCell();
  const b = cell.createEntity("Walker", at(10), { name: "b" });
  const a = cell.createEntity("Walker", at(0), { name: "a" });
  const c = cell.createEntity("Walker", at(20), { name: "c" });
  let moved = false;
  // a's client sends nonsense from inside a's update; the handler moves b before c's update in the same pass.
  const ca = attach(a, {
    onBadInput: () => {
      if (!moved) b.position = at(50);
      moved = true;
    },
  });
  const cc = attach(c);
  for (let i = 0; i < 3; i++) cell.tick(100);
  const before = cc.frames.length;
  ca.onFrame = () => {
    ca.onFrame = () => {};
    ca.witness.receive(new Uint8Array([250]));
  };
  b.position = at(11); // so that a and c have something to send
  cell.tick(100);
  assert.ok(moved, "the bad input handler ran");
  assert.equal(ca.witness.stats.badInputs, 1);
  assert.ok(cc.frames.length > before, "c was sent a frame in that tick");
  assert.ok(Math.abs(seenX(cc, b) - 50) < 0.1, `c sees b at ${seenX(cc, b)} after the tick it moved in`);
  // a sent b before the move: it catches up on the next tick.
  assert.ok(Math.abs(seenX(ca, b) - 11) < 0.1);
  cell.tick(100);
  assert.ok(Math.abs(seenX(ca, b) - 50) < 0.1);
});

Deno.test("a destroyed entity leaves the AoI of every witness, added by a trigger or by the game", () => {
  const cell = makeCell();
  const a = cell.createEntity("Walker", at(0), { name: "a" });
  const far = cell.createEntity("Walker", at(300), { name: "far" });
  const near = cell.createEntity("Walker", at(5), { name: "near" });
  const ca = attach(a);
  ca.witness.addToAoI(far);
  for (let i = 0; i < 3; i++) cell.tick(100);
  assert.ok(ca.world.entities.has(far.id) && ca.world.entities.has(near.id));
  cell.destroyEntity(far);
  cell.destroyEntity(near);
  for (let i = 0; i < 3; i++) cell.tick(100);
  assert.ok(!ca.world.entities.has(far.id) && !ca.world.entities.has(near.id));
  assert.equal(ca.witness.aoiSize, 0);
});

Deno.test("frames handed to sinks stay as they were sent, however many follow", () => {
  const cell = makeCell();
  const walkers: Entity[] = [];
  for (let i = 0; i < 60; i++) walkers.push(cell.createEntity("Walker", at(i * 3 - 90, i % 7), { name: `w${i}` }));
  const clients = walkers.slice(0, 20).map((e) => attach(e));
  for (let t = 0; t < 200; t++) {
    for (const e of walkers) e.position = at(e.x + ((t + e.id) % 5) - 2, e.z + ((t * e.id) % 3) - 1);
    cell.tick(100);
  }
  let frames = 0, bytes = 0;
  for (const c of clients) {
    for (const [kept, copy] of c.frames) {
      assert.deepEqual(kept, copy);
      frames++;
      bytes += kept.length;
    }
  }
  // Enough frames that they spilled over several shared buffers.
  assert.ok(frames >= 4000 && bytes > 3 * 64 * 1024, `${frames} frames, ${bytes} bytes`);
});

Deno.test("an entity's pose, flags and newest event number are its row: what it writes, witnesses read", () => {
  const cell = makeCell();
  const a = cell.createEntity("Walker", at(1, 2), { name: "a" });
  const b = cell.createEntity("Walker", at(3, 4), { name: "b" });
  assert.notEqual(a.row, b.row);
  const row = (e: Entity) => Array.from(rows.a.subarray(e.row, e.row + ROW));
  a.position = { x: 7, y: 8, z: 9 };
  a.direction = { yaw: 0.5, pitch: -0.25, roll: 0.125 };
  a.isOnGround = false;
  assert.deepEqual(row(a).slice(R_X, R_ROLL + 1), [7, 8, 9, 0.5, -0.25, 0.125]);
  assert.equal(rows.a[a.row + R_STATE] & R_ON_GROUND, 0);
  a.isOnGround = true;
  assert.equal(rows.a[a.row + R_STATE] & R_ON_GROUND, R_ON_GROUND);
  assert.deepEqual(row(b).slice(R_X, R_Z + 1), [3, 0, 4], "another entity's row is its own");
  // The history numbers its events in the same row.
  const h = historyOf(a);
  a.props.name = "a2";
  assert.ok(h.lastSeq > 1);
  assert.equal(rows.a[a.row + R_SEQ], h.lastSeq);
  cell.destroyEntity(a);
  assert.ok(a.destroyed);
  assert.equal(rows.a[a.row + R_STATE] & R_DESTROYED, R_DESTROYED);
  assert.equal(rows.a[b.row + R_STATE] & R_DESTROYED, 0);
});
