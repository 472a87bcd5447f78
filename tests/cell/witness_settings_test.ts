/**
 * Witness settings from scripts (AoI radius, byte budget, priority weights), checked against the space's ghost
 * radius, kept across an offload; and a space's own AoI and ghost radius reaching its cells with the geometry.
 */
import assert from "node:assert/strict";
import { createRegistry, defineEntity, T } from "../../core/def/mod.ts";
import { CellScript, type WitnessSettings } from "../../core/script.ts";
import type { Entity } from "../../cell/entity.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../../cell/witness/witness.ts";
import { twoCellsOf } from "../../testing/two_cells.ts";

const Seer = defineEntity({
  name: "Seer",
  hasCell: true,
  hasClient: true,
  volatile: { position: true },
  properties: { hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100 } },
});
const registry = createRegistry({ entities: [Seer] });
const errors: string[] = [];
/** What the next witness's script sets in onGetWitness. */
let onGet: Partial<WitnessSettings> | null = null;

class Tuner extends CellScript {
  override onGetWitness() {
    if (!onGet) return;
    try {
      this.self.setWitnessSettings(onGet);
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
}

const at = (x: number, z = 50) => ({ x, y: 0, z });

/** Two cells split at x = 100, AoI 30 (+5), ghosts 45 m deep: an AoI radius of at most 30 keeps the rule. */
function setup() {
  errors.length = 0;
  onGet = null;
  const h = twoCellsOf({ registry, scripts: { Seer: Tuner }, cfg: { ghostRadius: 45 }, clientSink: () => () => {} });
  for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const watch = (e: Entity) => new Witness(e, {}, () => {});
  return { ...h, watch };
}

Deno.test("a script sets its witness's AoI radius, budget and weights; each is checked with a clear error", () => {
  const { a, watch } = setup();
  const p = a.createEntity("Seer", at(50));
  assert.equal(p.witnessSettings, null);
  assert.throws(() => p.setAoIRadius(20), /setAoIRadius: Seer \d+ has no witness \(no client attached\)/);
  onGet = { aoiRadius: 20, bytesPerTick: 900, distanceWeighting: 0.5, weighting: 2, maxPriorityDelta: 4 };
  const w = watch(p);
  assert.deepEqual(errors, []);
  assert.deepEqual(p.witnessSettings, onGet);
  assert.equal(w.aoiRadius, 20);
  assert.deepEqual([...w.scripted].sort(), Object.keys(onGet).sort());

  // 45 m of ghosts allow 45 - 5 (AoI hysteresis) - 10 (offload hysteresis) = 30 m.
  p.setAoIRadius(30);
  assert.equal(w.aoiRadius, 30);
  assert.throws(
    () => p.setAoIRadius(31),
    (e: Error) =>
      e instanceof RangeError && e.message.includes(`setAoIRadius: Seer ${p.id} (space ${p.spaceID})`) &&
      e.message.includes("31 m is beyond what the space's ghost radius (45 m) allows") &&
      e.message.includes("ghost radius >= AoI radius + AoI hysteresis (5 m) + offload hysteresis (10 m)") &&
      e.message.includes("at most 30 m"),
  );
  assert.equal(w.aoiRadius, 30, "a refused change changes nothing");
  for (
    const [bad, why] of [
      [{ bytesPerTick: 10 }, /bytesPerTick 10 is not an integer number of bytes from 100 to 1000000/],
      [{ bytesPerTick: 1000.5 }, /bytesPerTick 1000.5 is not/],
      [{ weighting: 0 }, /weighting 0 is not a number more than 0/],
      [{ distanceWeighting: -1 }, /distanceWeighting -1 is not a number from 0 to 1000/],
      [{ maxPriorityDelta: NaN }, /maxPriorityDelta null is not/],
      [{ aoiRadius: -3 }, /aoiRadius -3 is not a radius in metres/],
      [{ colour: 3 }, /no witness setting "colour"/],
    ] as [Record<string, number>, RegExp][]
  ) {
    assert.throws(() => p.setWitnessSettings({ aoiRadius: 10, ...bad }), why, JSON.stringify(bad));
  }
  assert.equal(w.aoiRadius, 30, "nothing of a refused change is applied");
  assert.equal(w.opts.bytesPerTick, 900);
});

Deno.test("a witness's settings set by script survive an offload to another cell", async () => {
  const h = setup();
  onGet = { aoiRadius: 25, bytesPerTick: 700, distanceWeighting: 0.05, weighting: 3, maxPriorityDelta: 6 };
  const p = h.a.createEntity("Seer", at(90));
  h.watch(p);
  await h.tick(3);
  for (let x = 91; x <= 125 && !h.b.entities.has(p.id); x++) {
    h.a.entities.get(p.id)?.cell.moveEntity(h.a.entities.get(p.id)!, x, 0, 50);
    await h.tick(1);
  }
  const moved = h.b.entities.get(p.id);
  assert.ok(moved, "the real moved to cell b");
  const w = witnessOf(moved)!;
  assert.ok(w, "its witness came along");
  assert.deepEqual(moved.witnessSettings, onGet);
  assert.deepEqual([...w.scripted].sort(), Object.keys(onGet).sort());

  // The space's AoI radius changes: a witness whose script set its own keeps it.
  for (const c of [h.a, h.b]) c.updateGeometry({ ...c.geometry, aoiRadius: 15 });
  assert.equal(w.aoiRadius, 25);
});

Deno.test("a space's AoI and ghost radius come with the geometry: ghost areas, witnesses and the script's view", () => {
  const h = setup();
  const follower = h.a.createEntity("Seer", at(50));
  const tuned = h.a.createEntity("Seer", at(40));
  const wf = h.watch(follower);
  onGet = { aoiRadius: 28 };
  const wt = h.watch(tuned);
  assert.deepEqual(follower.spaceSettings, { aoiRadius: 30, ghostRadius: 45 });
  assert.equal(h.a.ghostAreas[0].area.minX, 100 - 45);

  for (const c of [h.a, h.b]) c.updateGeometry({ ...c.geometry, aoiRadius: 50, ghostRadius: 80 });
  assert.deepEqual(follower.spaceSettings, { aoiRadius: 50, ghostRadius: 80 });
  assert.equal(h.a.ghostAreas[0].area.minX, 100 - 80, "ghosts are held 80 m deep now");
  assert.equal(h.b.ghostAreas[0].area.maxX, 100 + 80);
  assert.equal(wf.aoiRadius, 50, "a witness without a radius of its own follows the space");
  assert.equal(wt.aoiRadius, 28, "one whose script set its radius keeps it");
  tuned.setAoIRadius(65); // 80 - 5 - 10
  assert.throws(() => tuned.setAoIRadius(66), /at most 65 m/);
  // A new witness starts at the space's radius.
  onGet = null;
  const late = h.a.createEntity("Seer", at(60));
  assert.equal(h.watch(late).aoiRadius, 50);

  // The ghost radius shrinks below what the tuned witness uses: it is brought down, with a warning.
  for (const c of [h.a, h.b]) c.updateGeometry({ ...c.geometry, aoiRadius: 20, ghostRadius: 40 });
  assert.equal(wt.aoiRadius, 25);
  assert.equal(wf.aoiRadius, 20);
  assert.ok(h.log.lines.some((l) => l.includes(`Seer ${tuned.id}: its AoI radius 65 m is beyond`)), "warned");
});

Deno.test("setSpaceSettings from a script is checked on the cell before anything is sent", async () => {
  const h = setup();
  const p = h.a.createEntity("Seer", at(50));
  await assert.rejects(p.setSpaceSettings({ aoiRadius: 10 }), /this cell has no cellappmgr/);
  const asked: unknown[] = [];
  (h.a.host as { setSpaceSettings?: unknown }).setSpaceSettings = (id: number, change: unknown) => {
    asked.push([id, change]);
    return Promise.resolve({ aoiRadius: 10, ghostRadius: 45 });
  };
  await assert.rejects(
    p.setSpaceSettings({ aoiRadius: 40 }),
    (e: Error) =>
      e.message.includes(`setSpaceSettings by Seer ${p.id}: space ${p.spaceID}: ghostRadius 45 m`) &&
      e.message.includes("use a ghostRadius of at least 55 m or an aoiRadius of at most 30 m"),
  );
  await assert.rejects(p.setSpaceSettings({ colour: 1 } as never), /no space setting colour/);
  await assert.rejects(p.setSpaceSettings({ ghostRadius: -1 }), /ghostRadius -1 is not a radius in metres/);
  assert.deepEqual(asked, [], "nothing refused went out");
  assert.deepEqual(await p.setSpaceSettings({ aoiRadius: 10 }), { aoiRadius: 10, ghostRadius: 45 });
  assert.deepEqual(asked, [[p.spaceID, { aoiRadius: 10 }]]);
});
