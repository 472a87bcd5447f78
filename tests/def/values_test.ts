import assert from "node:assert/strict";
import {
  ChangeLog,
  ChangeRecord,
  ChangeSink,
  createRegistry,
  PropertyContainer,
  PropertyDef,
  PropertyError,
  T,
  toRecord,
} from "../../core/def/mod.ts";

const Item = T.dict({ id: T.UINT32, count: T.UINT16, tags: T.array(T.STRING) });
const reg = createRegistry({
  entities: [{
    name: "Hero",
    properties: {
      i8: { type: T.INT8, flags: "CELL_PUBLIC" },
      u16: { type: T.UINT16, flags: "CELL_PUBLIC" },
      i64: { type: T.INT64, flags: "CELL_PUBLIC" },
      f32: { type: T.FLOAT32, flags: "CELL_PUBLIC" },
      flag: { type: T.BOOL, flags: "CELL_PUBLIC" },
      name: { type: T.string(8), flags: "ALL_CLIENTS" },
      data: { type: T.blob(4), flags: "CELL_PRIVATE" },
      pos: { type: T.VECTOR3, flags: "CELL_PRIVATE" },
      bag: { type: T.array(Item, { maxLength: 3 }), flags: "OWN_CLIENT" },
      grid: { type: T.array(T.array(T.INT8)), flags: "OTHER_CLIENTS" },
      look: { type: T.dict({ hat: T.UINT8, colours: T.array(T.UINT8) }), flags: "OTHER_CLIENTS", sendLatestOnly: true },
      mood: { type: T.UINT8, flags: "OTHER_CLIENTS", sendLatestOnly: true },
    },
  }],
});
const hero = reg.get("Hero");

// deno-lint-ignore no-explicit-any
type Loose = Record<string, any>;

function setup(): { c: PropertyContainer; log: ChangeLog; v: Loose } {
  const log = new ChangeLog();
  const c = new PropertyContainer(hero, "cell", { sink: log, entityId: 5 });
  return { c, log, v: c.view as Loose };
}

function replay(records: readonly ChangeRecord[]): PropertyContainer {
  const g = new PropertyContainer(hero, "cell", { readOnly: true });
  for (const r of records) g.apply(r);
  return g;
}

Deno.test("type checks at the moment of the set name entity type, property and value", () => {
  const { v } = setup();
  const cases: [string, unknown, RegExp][] = [
    ["i8", "3", /Hero\.i8: "3" is a string, expected INT8/],
    ["i8", 1.5, /Hero\.i8: 1\.5 is not an integer \(INT8\)/],
    ["i8", 128, /Hero\.i8: 128 is out of range for INT8 \(-128\.\.127\)/],
    ["u16", -1, /Hero\.u16: -1 is out of range for UINT16/],
    ["i64", 2 ** 60, /Hero\.i64: .* is out of range for INT64/],
    ["f32", 1e39, /Hero\.f32: 1e\+39 is out of range for FLOAT32/],
    ["flag", 1, /Hero\.flag: 1 is a number, expected BOOL/],
    ["name", "abcdefghi", /Hero\.name: "abcdefghi" is 9 UTF-8 bytes, over the maximum of 8/],
    ["name", "ééééé", /Hero\.name: "ééééé" is 10 UTF-8 bytes/],
    ["data", new Uint8Array(5), /Hero\.data: blob of 5 bytes is over the maximum of 4/],
    ["pos", { x: 1, y: 2 }, /Hero\.pos: z is undefined, expected a number/],
    ["bag", [{ id: 1, count: 1 }], /Hero\.bag\[0\]: missing field 'tags'/],
    ["bag", [{ id: 1, count: 1, tags: [], extra: 1 }], /Hero\.bag\[0\]: unknown field 'extra'/],
    ["bag", [{ id: 1, count: 70000, tags: [] }], /Hero\.bag\[0\]\.count: 70000 is out of range/],
  ];
  for (const [prop, value, re] of cases) {
    assert.throws(() => (v[prop] = value), (e: unknown) => e instanceof PropertyError && re.test(e.message), prop);
  }
  assert.throws(() => v.bag.push({ id: 1, count: 99999, tags: [] }), /Hero\.bag\[0\]\.count: 99999 is out of range/);
  v.bag = [];
  assert.throws(
    () => v.bag.push(...[1, 2, 3, 4].map((id) => ({ id, count: 1, tags: [] }))),
    /Hero\.bag: array of 4 elements is over the maximum of 3/,
  );
  v.f32 = 0.1;
  assert.equal(v.f32, Math.fround(0.1), "FLOAT32 is stored rounded so replays are exact");
  v.i64 = -(2 ** 50);
  assert.equal(v.i64, -(2 ** 50));
  v.i64 = 5n;
  assert.equal(v.i64, 5);
});

Deno.test("nested changes are recorded with one index per level and replay to equal values", () => {
  const { c, log, v } = setup();
  v.bag = [{ id: 1, count: 1, tags: ["a"] }];
  v.bag[0].count = 4; // [0, 1]
  v.bag[0].tags.push("b"); // slice at [0, 2]
  v.bag[0].tags[1] = "c"; // [0, 2, 1]
  v.bag.push({ id: 2, count: 2, tags: [] }); // slice at []
  v.bag[1] = { id: 3, count: 3, tags: ["z"] }; // replace element: [1]
  v.grid = [[1, 2], [3]];
  v.grid[1][0] = 9; // [1, 0]
  v.grid[0].splice(0, 1, 7, 8); // one slice at [0]: [0, 1) -> [7, 8]
  const recs = log.drain();
  assert.deepEqual(
    recs.map((r) => [hero.properties[r.index].name, r.kind, r.path, r.start, r.end, r.value]),
    [
      ["bag", "set", [], -1, -1, [{ id: 1, count: 1, tags: ["a"] }]],
      ["bag", "set", [0, 1], -1, -1, 4],
      ["bag", "slice", [0, 2], 1, 1, ["b"]],
      ["bag", "set", [0, 2, 1], -1, -1, "c"],
      ["bag", "slice", [], 1, 1, [{ id: 2, count: 2, tags: [] }]],
      ["bag", "set", [1], -1, -1, { id: 3, count: 3, tags: ["z"] }],
      ["grid", "set", [], -1, -1, [[1, 2], [3]]],
      ["grid", "set", [1, 0], -1, -1, 9],
      ["grid", "slice", [0], 0, 1, [7, 8]],
    ],
  );
  assert.deepEqual(replay(recs).values, c.values);
  assert.deepEqual(c.values[hero.property("grid").index], [[7, 8, 2], [9]]);
});

Deno.test("paths follow elements after splices; removed elements stop recording", () => {
  const { c, log, v } = setup();
  v.bag = [{ id: 1, count: 1, tags: [] }, { id: 2, count: 2, tags: [] }];
  const second = v.bag[1];
  v.bag.shift(); // slice [0, 1) -> []
  second.count = 7; // now at index 0
  const removed = v.bag.pop();
  removed.count = 8; // detached: not recorded, no error
  v.bag.unshift({ id: 5, count: 5, tags: [] });
  v.bag.sort((a: { id: number }, b: { id: number }) => b.id - a.id);
  const recs = log.drain().slice(1);
  assert.deepEqual(recs.map((r) => [r.kind, r.path, r.start, r.end]), [
    ["slice", [], 0, 1],
    ["set", [0, 1], -1, -1],
    ["slice", [], 0, 1],
    ["slice", [], 0, 0],
  ]);
  v.bag.push({ id: 9, count: 1, tags: [] });
  v.bag.reverse();
  v.bag.length = 1;
  const all = log.drain();
  assert.deepEqual(all.map((r) => [r.kind, r.path]), [["slice", []], ["set", []], ["slice", []]]);
  const g = new PropertyContainer(hero, "cell");
  g.values[8] = [{ id: 5, count: 5, tags: [] }];
  for (const r of all) g.apply(r);
  assert.deepEqual(g.values[8], c.values[8]);
});

Deno.test("a splice is one slice change, not a list of element changes", () => {
  const { log, v } = setup();
  v.grid = [[1, 2, 3, 4, 5]];
  log.drain();
  const removed = v.grid[0].splice(1, 3, 9);
  assert.deepEqual([...removed], [2, 3, 4]);
  const recs = log.drain();
  assert.equal(recs.length, 1);
  assert.deepEqual({ ...recs[0] }, {
    kind: "slice",
    index: 9,
    path: [0],
    value: [9],
    start: 1,
    end: 4,
    seq: 2,
    detailLevel: 0,
  });
});

Deno.test("assigning an equal value records nothing", () => {
  const { log, v } = setup();
  v.i8 = 0;
  v.name = "";
  v.bag = [];
  v.pos = { x: 0, y: 0, z: 0 };
  v.grid = [[1]];
  log.drain();
  v.grid = [[1]];
  v.grid[0][0] = 1;
  v.data = new Uint8Array(0);
  assert.equal(log.size, 0);
});

Deno.test("sendLatestOnly keeps the newest change; nested changes become whole-property changes", () => {
  const { c, log, v } = setup();
  v.mood = 1;
  v.i8 = 1;
  v.mood = 2;
  v.mood = 3;
  v.look = { hat: 1, colours: [1] };
  v.look.hat = 2; // forced whole change
  v.look.colours.push(4); // forced whole change
  const recs = log.drain();
  assert.deepEqual(recs.map((r) => [hero.properties[r.index].name, r.kind, r.path, r.value]), [
    ["i8", "set", [], 1],
    ["mood", "set", [], 3],
    ["look", "set", [], { hat: 2, colours: [1, 4] }],
  ]);
  assert.deepEqual(replay(recs).values.slice(0, 12), c.values.slice(0, 12));
});

Deno.test("a ghost (read-only) container refuses every set, but applies the real's changes", () => {
  const real = new PropertyContainer(hero, "cell");
  const records: ChangeRecord[] = [];
  const sink: ChangeSink = {
    onChange: (p: PropertyDef, path, value, s, e) => records.push(toRecord(p, path, structuredClone(value), s, e)),
  };
  real.sink = sink;
  // deno-lint-ignore no-explicit-any
  const rv = real.view as Record<string, any>;
  rv.grid = [[1]];
  const ghost = new PropertyContainer(hero, "ghost", { readOnly: true, entityId: 42 });
  // deno-lint-ignore no-explicit-any
  const gv = ghost.view as Record<string, any>;
  for (const r of records) ghost.apply(r);
  assert.throws(() => (gv.i8 = 1), /cannot set Hero\.i8 on ghost entity 42: only the real entity may change/);
  assert.throws(() => gv.grid[0].push(2), /cannot set Hero\.grid on ghost entity 42/);
  assert.throws(() => (gv.grid[0][0] = 5), /cannot set Hero\.grid on ghost entity 42/);
  assert.throws(() => gv.bag, /Hero\.bag \(OWN_CLIENT\) is not held by the ghost part of entity 42/);
  assert.deepEqual(gv.grid, [[1]]);
  ghost.readOnly = false; // offloaded: the ghost becomes real
  gv.i8 = 2;
  assert.equal(gv.i8, 2);
});

Deno.test("the view is typed and fast to read; containers start from defaults", () => {
  const c = new PropertyContainer(hero, "all");
  // deno-lint-ignore no-explicit-any
  const v = c.view as Record<string, any>;
  assert.deepEqual(Object.keys(Object.getPrototypeOf(v)), hero.properties.map((p) => p.name));
  assert.deepEqual(v.look, { hat: 0, colours: [] });
  assert.equal(JSON.stringify(v.bag), "[]");
  assert.throws(() => c.set("nope", 1), /Hero has no property 'nope'/);
});
