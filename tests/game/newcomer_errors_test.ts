/**
 * What a new game's author meets first: an entity's `props` print and serialise as their values; a TypeScript
 * definition spells its flags as the Flag type does (the older .def spellings are for .def files); a spaceCreated
 * hook naming a type the game lacks is told so, with the types it has.
 */
import assert from "node:assert/strict";
import { createRegistry, DefError, defineEntity, loadDefs, PropertyContainer, T } from "../../core/def/mod.ts";
import { gameEntities } from "../../mgr/spawn_guard.ts";
import type { Logger } from "../../core/log.ts";

const Walker = defineEntity({
  name: "Walker",
  hasCell: true,
  hasClient: true,
  properties: {
    steps: { type: T.UINT32, flags: "ALL_CLIENTS", default: 6 },
    bag: { type: T.array(T.dict({ id: T.UINT16, n: T.UINT8 })), flags: "ALL_CLIENTS" },
    secret: { type: T.INT32, flags: "CELL_PRIVATE" },
  },
});
const registry = createRegistry({ entities: [Walker] });

Deno.test("an entity's props print and serialise as their values (what a client holds)", () => {
  const c = new PropertyContainer(registry.get("Walker"), "otherClients", { entityId: 4 });
  const props = c.view as Record<string, unknown>;
  (props.bag as unknown[]).push({ id: 3, n: 2 });
  assert.equal(props.steps, 6);
  assert.deepEqual(JSON.parse(JSON.stringify(props)), { steps: 6, bag: [{ id: 3, n: 2 }] });
  assert.equal(Deno.inspect(props), Deno.inspect({ steps: 6, bag: [{ id: 3, n: 2 }] }));
  assert.equal(
    Deno.inspect(props, { colors: true }),
    Deno.inspect({ steps: 6, bag: [{ id: 3, n: 2 }] }, { colors: true }),
  );
  // Still the live view: reads and sets go through the type checks.
  props.steps = 7;
  assert.equal(JSON.stringify(props), '{"steps":7,"bag":[{"id":3,"n":2}]}');
  assert.throws(() => props.steps = -1);
  assert.deepEqual(Object.keys(props), [], "nothing of its own to enumerate beside the accessors");
});

Deno.test("a TypeScript definition spells flags as the Flag type does; .def files may use the older spellings", async () => {
  const older = defineEntity({
    name: "Old",
    hasCell: true,
    // deno-lint-ignore no-explicit-any
    properties: { hp: { type: T.INT32, flags: "ALL_CLIENT" as any } },
  });
  assert.throws(
    () => createRegistry({ entities: [older] }),
    (e: unknown) => e instanceof DefError && /flag 'ALL_CLIENT' is written ALL_CLIENTS/.test(e.message),
  );
  const files: Record<string, string> = {
    "d/entities.xml": "<root><Old/></root>",
    "d/entity_defs/Old.def":
      "<root><Properties><hp><Type>INT32</Type><Flags>ALL_CLIENT</Flags></hp></Properties></root>",
  };
  const reg = await loadDefs("d", { readText: (p) => Promise.resolve(files[p]) });
  assert.equal(reg.get("Old").property("hp").flags, "ALL_CLIENTS");
});

Deno.test("a spaceCreated hook naming a type the game lacks: the error says so and lists the game's types", () => {
  const errors: string[] = [];
  const log = { error: (m: string) => errors.push(m) } as unknown as Logger;
  const space = { bounds: { minX: 0, minZ: 0, maxX: 10, maxZ: 10 }, isDefault: true, npcs: 0 };
  const out = gameEntities(() => [{ type: "Beacon", count: 2 }], registry, log, space as never);
  assert.deepEqual(out, []);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /Beacon is not a type of the game \(known: Walker\)/);
});
