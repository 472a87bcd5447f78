/**
 * A space's AoI and ghost radius on the cellappmgr (Spaces): checked at creation and on change, and carried by
 * every geometry it sends: to the cells made at creation, on a change, to a cell added later (balancing), and
 * back from a cellapp's claim after a cellappmgr restart.
 */
import assert from "node:assert/strict";
import { Registry } from "../../mgr/registry.ts";
import { Spaces } from "../../mgr/spaces.ts";
import type { Channel, SpaceGeometry } from "../../core/wire/mod.ts";
import { RequestError } from "../../core/views.ts";
import { memoryLogger } from "../../testing/log.ts";

/** What the fake cellapps were sent: [cellapp, message name, geometry]. */
type Sent = [number, string, SpaceGeometry];

function setup(cellapps: number) {
  const log = memoryLogger();
  const registry = new Registry(log);
  const sent: Sent[] = [];
  const spaces = new Spaces(registry, log, () => Promise.reject(new Error("no ids in this test")));
  spaces.settingsDefaults = { aoiRadius: 40, ghostRadius: 60 };
  const join = () => {
    const ch = {
      remote: "127.0.0.1:1",
      request: (def: { name: string }, g: SpaceGeometry) => {
        sent.push([m.id, def.name, structuredClone(g)]);
        return Promise.resolve(true);
      },
      send: (def: { name: string }, g: SpaceGeometry) => void sent.push([m.id, def.name, structuredClone(g)]),
      drop: () => {},
      closed: new Promise(() => {}),
    } as unknown as Channel;
    const m = registry.register(ch, {
      role: "cellapp",
      pid: 1,
      address: `127.0.0.1:${9000 + registry.members.size}`,
      previousId: null,
      clientUrl: null,
      startedAt: 0,
      entityIdHighWater: 0,
    });
    return m;
  };
  for (let i = 0; i < cellapps; i++) join();
  return { spaces, sent, join, registry };
}

const bounds = { minX: 0, minZ: 0, maxX: 1000, maxZ: 200 };

Deno.test("creation checks the radii against the ghost rule and gives them to every cell", async () => {
  const { spaces, sent } = setup(2);
  await assert.rejects(
    spaces.create({ bounds, cells: 2, settings: { aoiRadius: 100 } }),
    (e: Error) =>
      e instanceof RequestError && e.code === "bad_request" &&
      e.message.includes("the new space: ghostRadius 60 m (the space's current or the cluster's) is less than") &&
      e.message.includes("use a ghostRadius of at least 115 m or an aoiRadius of at most 45 m"),
  );
  await assert.rejects(
    spaces.create({ bounds, cells: 1, settings: { ghostRadius: 0 } }),
    /ghostRadius 0 is not a radius/,
  );
  assert.equal(sent.length, 0, "nothing was made");

  const space = await spaces.create({ bounds, cells: 2, settings: { aoiRadius: 50, ghostRadius: 80 } });
  assert.equal(sent.length, 2);
  for (const [, name, g] of sent) {
    assert.equal(name, "createCell");
    assert.equal(g.aoiRadius, 50);
    assert.equal(g.ghostRadius, 80);
  }
  assert.deepEqual(spaces.settingsOf(space), { aoiRadius: 50, ghostRadius: 80 });
  const plain = await spaces.create({ bounds, cells: 1 });
  assert.ok(!("aoiRadius" in sent.at(-1)![2]) && !("ghostRadius" in sent.at(-1)![2]), "no settings: the cellapps'");
  assert.deepEqual(spaces.settingsOf(plain), { aoiRadius: 40, ghostRadius: 60 });
});

Deno.test("a change is checked whole, then every cellapp of the space hears it; a cell added later gets it too", async () => {
  const { spaces, sent, join } = setup(2);
  const space = await spaces.create({ bounds, cells: 2 });
  sent.length = 0;
  assert.throws(() => spaces.setSettings(space, { aoiRadius: 50 }), /ghostRadius 60 m .* aoiRadius 50 m/);
  assert.throws(() => spaces.setSettings(space, { ghostRadius: 50 }), /space \d+: ghostRadius 50 m is less than/);
  assert.equal(sent.length, 0);
  assert.deepEqual(spaces.setSettings(space, { aoiRadius: 100, ghostRadius: 120 }), {
    aoiRadius: 100,
    ghostRadius: 120,
  });
  assert.deepEqual(sent.map(([a, name, g]) => [a, name, g.aoiRadius, g.ghostRadius]).sort(), [
    [1, "updateGeometry", 100, 120],
    [2, "updateGeometry", 100, 120],
  ]);
  // Only the ghost radius now: the AoI radius the space set stays, and is checked with it.
  assert.throws(() => spaces.setSettings(space, { ghostRadius: 110 }), /less than aoiRadius 100 m \(the space's/);
  sent.length = 0;

  // Balancing puts a third cell on a new cellapp: it is made with the space's settings.
  const third = join();
  const tree = { axis: "x" as const, at: 900, left: space.tree, right: { cell: { id: 3, cellapp: third.id } } };
  await spaces.setTree(space, tree);
  const made = sent.filter(([, name]) => name === "createCell");
  assert.deepEqual(made.map(([a, , g]) => [a, g.aoiRadius, g.ghostRadius]), [[third.id, 100, 120]]);
});

Deno.test("a cellappmgr that restarted takes a space's settings back from a cellapp's claim", () => {
  const { spaces, registry } = setup(1);
  const [m] = registry.members.values();
  const g: SpaceGeometry = {
    spaceId: 7,
    bounds: [0, 0, 100, 100],
    tree: { cell: { id: 1, cellapp: m.id } },
    isDefault: false,
    cellapps: [],
    aoiRadius: 30,
    ghostRadius: 200,
  };
  assert.deepEqual(spaces.adopt(m.id, [g]), []);
  const space = spaces.all.get(7)!;
  assert.deepEqual(space.settings, { aoiRadius: 30, ghostRadius: 200 });
  const again = spaces.geometryOf(space);
  assert.equal(again.aoiRadius, 30);
  assert.equal(again.ghostRadius, 200);
});
