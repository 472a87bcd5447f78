import assert from "node:assert/strict";
import { RangeList } from "../../cell/range/range_list.ts";
import {
  RANGE_FLAG_AOI,
  RANGE_FLAG_SCRIPT,
  RANGE_FLAGS_ENTITY,
  type RangeEntity,
  type RangeNode,
  type RangeTrigger,
} from "../../cell/range/range_node.ts";
import { seededRandom } from "../../core/random.ts";

const rng = seededRandom;

class Ent implements RangeEntity {
  rangeNode: RangeNode | null = null;
  constructor(readonly id: number, public x: number, public z: number, readonly makes = RANGE_FLAGS_ENTITY) {}
}

interface Rec {
  t: RangeTrigger;
  owner: Ent;
  circle: boolean;
  wants: number;
  filter: ((e: RangeEntity) => boolean) | null;
  /** What the handler has been told is inside. */
  seen: Set<Ent>;
  /** Events of the current step, in order. */
  log: string[];
}

/** The rule both sides follow: the square of half-side r (bounds inclusive), then the circle for circle triggers. */
function bruteInside(rec: Rec, e: Ent): boolean {
  const o = rec.owner, r = rec.t.radius;
  if (e === o || (rec.wants & e.makes) === 0 || (rec.filter !== null && !rec.filter(e))) return false;
  if (e.x < o.x - r || e.x > o.x + r || e.z < o.z - r || e.z > o.z + r) return false;
  if (!rec.circle) return true;
  const dx = e.x - o.x, dz = e.z - o.z;
  return dx * dx + dz * dz <= r * r;
}

/** A range list, live entities and triggers, with handlers that keep what they were told and check its sense. */
class World {
  readonly list = new RangeList();
  readonly ents: Ent[] = [];
  readonly recs: Rec[] = [];
  nextId = 1;
  events = 0;
  /** Called after each delivered event, for the re-entrancy tests. */
  hook: ((rec: Rec, e: Ent, enter: boolean) => void) | null = null;

  addEntity(x: number, z: number, makes = RANGE_FLAGS_ENTITY): Ent {
    const e = new Ent(this.nextId++, x, z, makes);
    this.ents.push(e);
    this.list.add(e, makes);
    return e;
  }

  removeEntity(e: Ent): void {
    const i = this.ents.indexOf(e);
    assert.ok(i >= 0);
    this.ents.splice(i, 1);
    for (let j = this.recs.length - 1; j >= 0; j--) if (this.recs[j].owner === e) this.recs.splice(j, 1);
    this.list.remove(e);
  }

  addTrigger(
    owner: Ent,
    r: number,
    circle: boolean,
    wants?: number,
    filter: ((e: RangeEntity) => boolean) | null = null,
  ): Rec {
    const rec = {
      owner,
      circle,
      wants: wants ?? (circle ? RANGE_FLAG_SCRIPT : RANGE_FLAG_AOI),
      filter,
      seen: new Set<Ent>(),
      log: [] as string[],
    } as Rec;
    this.recs.push(rec);
    const handler = {
      onEnter: (e: RangeEntity) => this.#event(rec, e as Ent, true),
      onLeave: (e: RangeEntity) => this.#event(rec, e as Ent, false),
    };
    const opts = { shape: circle ? "circle" as const : "square" as const, wants, filter: filter ?? undefined };
    rec.t = this.list.addTrigger(owner, r, handler, opts);
    return rec;
  }

  removeTrigger(rec: Rec): void {
    this.recs.splice(this.recs.indexOf(rec), 1);
    rec.t.remove();
  }

  #event(rec: Rec, e: Ent, enter: boolean): void {
    this.events++;
    assert.ok(this.recs.includes(rec), "event for a removed trigger");
    assert.notEqual(e, rec.owner, "owner reported to its own trigger");
    if (enter) {
      assert.ok(!rec.seen.has(e), `double enter of ${e.id}`);
      rec.seen.add(e);
    } else {
      assert.ok(rec.seen.delete(e), `leave of ${e.id} that was not inside`);
    }
    rec.log.push(`${enter ? "+" : "-"}${e.id}`);
    this.hook?.(rec, e, enter);
  }

  expected(rec: Rec): Set<Ent> {
    return new Set(this.ents.filter((e) => bruteInside(rec, e)));
  }

  /** The lists are sound and every trigger's handler holds exactly what brute force says. */
  verify(where: string): void {
    this.list.check();
    assert.equal(this.list.pendingEvents, 0);
    for (const rec of this.recs) {
      const want = [...this.expected(rec)].map((e) => e.id).sort((a, b) => a - b);
      const got = [...rec.seen].map((e) => e.id).sort((a, b) => a - b);
      assert.deepEqual(got, want, `${where}: trigger of ${rec.owner.id} (r ${rec.t.radius}, circle ${rec.circle})`);
      // What the trigger says it holds (read from the lists for a square without a filter) agrees.
      const listed = [...rec.t.entities()].map((e) => e.id).sort((a, b) => a - b);
      assert.deepEqual(listed, want, `${where}: entities() of trigger of ${rec.owner.id}`);
      assert.equal(rec.t.size, want.length, `${where}: size of trigger of ${rec.owner.id}`);
      for (const e of this.ents) assert.equal(rec.t.has(e), want.includes(e.id), `${where}: has(${e.id})`);
    }
  }

  /** Runs one step and checks that its events are exactly the difference brute force sees. */
  step(where: string, fn: () => void): void {
    const before = this.recs.map((rec) => [rec, this.expected(rec)] as const);
    for (const rec of this.recs) rec.log.length = 0;
    fn();
    this.verify(where);
    for (const [rec, was] of before) {
      if (!this.recs.includes(rec)) continue;
      const now = this.expected(rec);
      const want = [
        ...[...now].filter((e) => !was.has(e)).map((e) => `+${e.id}`),
        ...[...was].filter((e) => !now.has(e)).map((e) => `-${e.id}`),
      ].sort();
      assert.deepEqual([...rec.log].sort(), want, `${where}: events of trigger of ${rec.owner.id}`);
    }
  }
}

function pick<T>(r: () => number, a: T[]): T {
  return a[Math.floor(r() * a.length)];
}

/** Integer positions on a small grid (so ties are common), sometimes far away or at another entity's point. */
function position(r: () => number, w: World): [number, number] {
  const u = r();
  if (u < 0.15 && w.ents.length > 0) {
    const e = pick(r, w.ents);
    return [e.x, e.z];
  }
  if (u < 0.22) return [Math.round((r() - 0.5) * 2e4), Math.round((r() - 0.5) * 2e4)];
  if (u < 0.27) return [(r() - 0.5) * 40, (r() - 0.5) * 40];
  return [Math.floor(r() * 41) - 20, Math.floor(r() * 41) - 20];
}

function randomOp(r: () => number, w: World, i: number): void {
  const u = r();
  const where = `op ${i}`;
  if (u < 0.08 || w.ents.length < 8) {
    const [x, z] = position(r, w);
    const makes = r() < 0.2 ? pick(r, [RANGE_FLAG_AOI, RANGE_FLAG_SCRIPT]) : RANGE_FLAGS_ENTITY;
    w.step(`${where} add`, () => w.addEntity(x, z, makes));
  } else if (u < 0.13 && w.ents.length > 8) {
    const e = pick(r, w.ents);
    w.step(`${where} remove ${e.id}`, () => w.removeEntity(e));
  } else if (u < 0.19 && w.recs.length < 14) {
    const owner = pick(r, w.ents);
    const circle = r() < 0.5;
    const filter = r() < 0.2 ? (e: RangeEntity) => e.id % 3 !== 0 : null;
    const radius = r() < 0.1 ? 0 : Math.floor(r() * 12) + (r() < 0.2 ? 0.5 : 0);
    w.step(`${where} addTrigger`, () => w.addTrigger(owner, radius, circle, undefined, filter));
  } else if (u < 0.22 && w.recs.length > 0) {
    const rec = pick(r, w.recs);
    w.step(`${where} removeTrigger`, () => w.removeTrigger(rec));
  } else if (u < 0.28 && w.recs.length > 0) {
    const rec = pick(r, w.recs);
    const radius = r() < 0.05 ? 5000 : Math.floor(r() * 14);
    w.step(`${where} setRadius ${radius}`, () => rec.t.setRadius(radius));
  } else {
    // Owners move more often, so triggers sweep the space too.
    const e = r() < 0.4 && w.recs.length > 0 ? pick(r, w.recs).owner : pick(r, w.ents);
    let x: number, z: number;
    if (r() < 0.7) {
      x = e.x + Math.floor(r() * 7) - 3;
      z = e.z + Math.floor(r() * 7) - 3;
    } else [x, z] = position(r, w);
    w.step(`${where} move ${e.id} to ${x},${z}`, () => w.list.move(e, x, z));
  }
}

Deno.test("range list: random moves, adds, removes and radius changes give brute force's events", () => {
  for (const seed of [1, 2, 3]) {
    const r = rng(seed);
    const w = new World();
    for (let i = 0; i < 30; i++) w.addEntity(Math.floor(r() * 41) - 20, Math.floor(r() * 41) - 20);
    for (let i = 0; i < 8; i++) w.addTrigger(w.ents[i], 2 + i, i % 2 === 0);
    w.verify("setup");
    for (let i = 0; i < 2500; i++) randomOp(r, w, i);
    assert.ok(w.events > 1000, `only ${w.events} events`);
  }
});

Deno.test("range list: many entities at one point, bounds exactly on them, radius zero", () => {
  const w = new World();
  const crowd: Ent[] = [];
  for (let i = 0; i < 20; i++) crowd.push(w.addEntity(5, 5));
  const a = w.addTrigger(crowd[0], 0, false);
  const b = w.addTrigger(crowd[1], 0, true);
  w.verify("crowd");
  assert.equal(a.seen.size, 19);
  assert.equal(b.seen.size, 19);
  const other = w.addEntity(8, 5);
  const c = w.addTrigger(other, 3, false);
  w.verify("on bound");
  assert.equal(c.seen.size, 20, "entities exactly on the lower X bound are inside");
  w.step("step off the bound", () => w.list.move(crowd[5], 4.999, 5));
  assert.ok(!c.seen.has(crowd[5]));
  w.step("back onto it", () => w.list.move(crowd[5], 5, 5));
  w.step("owner onto the crowd", () => w.list.move(other, 5, 5));
  w.step("owner away", () => w.list.move(other, 5, 8));
  assert.equal(c.seen.size, 20, "entities exactly on the lower Z bound are inside");
  w.step("grow", () => c.t.setRadius(100));
  w.step("shrink to zero", () => c.t.setRadius(0));
  w.step("crowd owner leaves", () => w.list.move(crowd[0], 6, 5));
  assert.equal(a.seen.size, 0);
  w.step("and comes back", () => w.list.move(crowd[0], 5, 5));
  assert.equal(a.seen.size, 19);
});

Deno.test("range list: teleports across the whole space and corner cuts send no transient events", () => {
  const w = new World();
  const r = rng(7);
  for (let i = 0; i < 200; i++) w.addEntity(Math.floor(r() * 2000), Math.floor(r() * 2000));
  const recs = [w.addTrigger(w.ents[0], 100, false), w.addTrigger(w.ents[1], 150, true)];
  w.verify("setup");
  for (let i = 0; i < 200; i++) {
    const e = i % 3 === 0 ? recs[i % 2].owner : pick(r, w.ents);
    const x = pick(r, [-1e6, 1e6, 0, 2000]) + Math.floor(r() * 2000);
    const z = Math.floor(r() * 2000);
    w.step(`teleport ${i}`, () => w.list.move(e, x, z));
  }
  // Diagonal past a corner: through the square on X, out on Z, within one move.
  const o = w.addEntity(1e7, 1e7);
  const sq = w.addTrigger(o, 10, false);
  const m = w.addEntity(1e7 - 20, 1e7 + 5);
  w.step("corner cut", () => w.list.move(m, 1e7, 1e7 + 40));
  assert.deepEqual(sq.log, []);
});

Deno.test("range list: circle triggers follow the circle edge as either side moves inside the square", () => {
  const w = new World();
  const owner = w.addEntity(0, 0);
  const c = w.addTrigger(owner, 10, true);
  const e = w.addEntity(9, 9);
  w.verify("corner of the square, outside the circle");
  assert.equal(c.seen.size, 0);
  w.step("target moves in", () => w.list.move(e, 7, 7));
  assert.deepEqual(c.log, [`+${e.id}`]);
  w.step("owner moves away inside the square", () => w.list.move(owner, -2, -2));
  assert.deepEqual(c.log, [`-${e.id}`]);
  w.step("owner back", () => w.list.move(owner, 0, 0));
  w.step("on the circle counts", () => w.list.move(e, 6, 8));
  assert.ok(c.seen.has(e));
  w.step("shrink", () => c.t.setRadius(9.9));
  assert.ok(!c.seen.has(e));
});

Deno.test("range list: flags and filters choose what a trigger sees", () => {
  const w = new World();
  const owner = w.addEntity(0, 0);
  const aoiOnly = w.addEntity(1, 1, RANGE_FLAG_AOI);
  const scriptOnly = w.addEntity(2, 2, RANGE_FLAG_SCRIPT);
  const both = w.addEntity(3, 3);
  const sq = w.addTrigger(owner, 5, false);
  const ci = w.addTrigger(owner, 5, true);
  const odd = w.addTrigger(owner, 5, false, RANGE_FLAGS_ENTITY, (e) => e.id % 2 === 1);
  w.verify("flags");
  assert.deepEqual(new Set(sq.seen), new Set([aoiOnly, both]));
  assert.deepEqual(new Set(ci.seen), new Set([scriptOnly, both]));
  assert.deepEqual(new Set(odd.seen), new Set([aoiOnly, scriptOnly, both].filter((e) => e.id % 2 === 1)));
  assert.ok(sq.t.has(both) && !sq.t.has(scriptOnly));
  assert.equal(ci.t.size, 2);
});

Deno.test("range list: entitiesInRange and entitiesAround equal brute force", () => {
  const r = rng(11);
  const w = new World();
  for (let i = 0; i < 300; i++) w.addEntity(Math.floor(r() * 60), Math.floor(r() * 60));
  for (let i = 0; i < 300; i++) {
    w.list.move(pick(r, w.ents), Math.floor(r() * 60), Math.floor(r() * 60));
    const x = Math.floor(r() * 70) - 5, z = Math.floor(r() * 70) - 5, radius = Math.floor(r() * 15);
    const ids = (a: RangeEntity[]) => a.map((e) => e.id).sort((p, q) => p - q);
    const inside = (e: Ent, cx: number, cz: number) => (e.x - cx) ** 2 + (e.z - cz) ** 2 <= radius * radius;
    assert.deepEqual(ids(w.list.entitiesInRange(x, z, radius)), ids(w.ents.filter((e) => inside(e, x, z))));
    const c = pick(r, w.ents);
    const even = (e: RangeEntity) => e.id % 2 === 0;
    assert.deepEqual(
      ids(w.list.entitiesAround(c, radius, even)),
      ids(w.ents.filter((e) => e !== c && even(e) && inside(e, c.x, c.z))),
    );
  }
});
