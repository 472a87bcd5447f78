import assert from "node:assert/strict";
import { RangeList } from "../../cell/range/range_list.ts";
import type { RangeEntity, RangeNode, RangeTrigger } from "../../cell/range/range_node.ts";
import { seededRandom } from "../../core/random.ts";

// Handlers that move, create and destroy entities and add, resize and remove triggers while events are delivered.
// After every top-level call the lists must be sound and each handler must hold what brute force says.

const rng = seededRandom;

class Ent implements RangeEntity {
  rangeNode: RangeNode | null = null;
  constructor(readonly id: number, public x: number, public z: number) {}
}

interface Rec {
  t: RangeTrigger;
  owner: Ent;
  circle: boolean;
  seen: Set<Ent>;
}

class World {
  readonly list = new RangeList();
  ents: Ent[] = [];
  recs: Rec[] = [];
  nextId = 1;
  budget = 0;
  nested = 0;
  constructor(readonly r: () => number) {}

  pick<T>(a: T[]): T {
    return a[Math.floor(this.r() * a.length)];
  }

  point(): [number, number] {
    if (this.r() < 0.1) return [Math.floor(this.r() * 4000) - 2000, Math.floor(this.r() * 4000) - 2000];
    return [Math.floor(this.r() * 31) - 15, Math.floor(this.r() * 31) - 15];
  }

  addEntity(): Ent {
    const [x, z] = this.point();
    const e = new Ent(this.nextId++, x, z);
    this.ents.push(e);
    this.list.add(e);
    return e;
  }

  removeEntity(e: Ent): void {
    this.ents = this.ents.filter((o) => o !== e);
    this.recs = this.recs.filter((rec) => rec.owner !== e);
    this.list.remove(e);
  }

  addTrigger(owner: Ent): void {
    const rec = { owner, circle: this.r() < 0.5, seen: new Set<Ent>() } as Rec;
    this.recs.push(rec);
    const handler = {
      onEnter: (e: RangeEntity, t: RangeTrigger) => this.event(rec, t, e as Ent, true),
      onLeave: (e: RangeEntity, t: RangeTrigger) => this.event(rec, t, e as Ent, false),
    };
    rec.t = this.list.addTrigger(owner, Math.floor(this.r() * 10), handler, {
      shape: rec.circle ? "circle" : "square",
      wants: 3,
    });
  }

  removeTrigger(rec: Rec): void {
    this.recs = this.recs.filter((o) => o !== rec);
    rec.t.remove();
  }

  event(rec: Rec, t: RangeTrigger, e: Ent, enter: boolean): void {
    rec.t ??= t; // initial enters arrive before addTrigger returns
    assert.equal(rec.t, t);
    assert.ok(this.recs.includes(rec), "event for a removed trigger");
    assert.notEqual(e, rec.owner);
    if (enter) {
      assert.ok(!rec.seen.has(e), "double enter");
      rec.seen.add(e);
    } else {
      assert.ok(rec.seen.delete(e), "leave without enter");
    }
    if (this.budget > 0 && this.r() < 0.5) {
      this.budget--;
      this.nested++;
      this.randomOp(e, rec);
    }
  }

  /** One random mutation; `e`/`rec` are the event's entity and trigger when called from a handler. */
  randomOp(e?: Ent, rec?: Rec): void {
    if (e?.rangeNode === null) e = undefined; // a leave can report an entity that was just removed
    const u = this.r();
    if (u < 0.1 || this.ents.length < 6) this.addEntity();
    else if (u < 0.18) {
      this.removeEntity(e && this.r() < 0.5 ? e : rec && this.r() < 0.3 ? rec.owner : this.pick(this.ents));
    } else if (u < 0.26 && this.recs.length < 12) this.addTrigger(e ?? this.pick(this.ents));
    else if (u < 0.32 && this.recs.length > 0) this.removeTrigger(rec && this.r() < 0.5 ? rec : this.pick(this.recs));
    else if (u < 0.38 && this.recs.length > 0) (rec ?? this.pick(this.recs)).t.setRadius(Math.floor(this.r() * 12));
    else {
      const m = e && this.r() < 0.5 ? e : this.pick(this.ents);
      if (m.rangeNode === null) return;
      const [x, z] = this.r() < 0.6
        ? [m.x + Math.floor(this.r() * 5) - 2, m.z + Math.floor(this.r() * 5) - 2]
        : this.point();
      this.list.move(m, x, z);
    }
  }

  verify(where: string): void {
    this.list.check();
    for (const rec of this.recs) {
      const o = rec.owner, r = rec.t.radius;
      const want = this.ents.filter((e) =>
        e !== o && Math.abs(e.x - o.x) <= r && Math.abs(e.z - o.z) <= r &&
        (!rec.circle || (e.x - o.x) ** 2 + (e.z - o.z) ** 2 <= r * r)
      ).map((e) => e.id).sort((a, b) => a - b);
      const got = [...rec.seen].map((e) => e.id).sort((a, b) => a - b);
      assert.deepEqual(got, want, `${where}: trigger of ${o.id}`);
    }
  }
}

Deno.test("range list: handlers that move, create, destroy and add/remove triggers leave it correct", () => {
  for (const seed of [5, 6]) {
    const w = new World(rng(seed));
    for (let i = 0; i < 25; i++) w.addEntity();
    for (let i = 0; i < 6; i++) w.addTrigger(w.ents[i]);
    w.verify("setup");
    for (let i = 0; i < 3000; i++) {
      w.budget = 12;
      w.randomOp();
      w.verify(`op ${i} (seed ${seed})`);
    }
    assert.ok(w.nested > 1500, `only ${w.nested} nested mutations`);
  }
});

Deno.test("range list: an owner that destroys itself from its trigger's onEnter", () => {
  const list = new RangeList();
  const owner = new Ent(1, 0, 0), visitor = new Ent(2, 50, 0), bystander = new Ent(3, 1, 1);
  list.add(owner);
  list.add(visitor);
  list.add(bystander);
  const told: string[] = [];
  list.addTrigger(bystander, 3, { onEnter: (e) => told.push(`+${e.id}`), onLeave: (e) => told.push(`-${e.id}`) });
  list.addTrigger(owner, 5, {
    onEnter: (e) => {
      told.push(`owner saw ${e.id}`);
      if (e === visitor) list.remove(owner);
    },
    onLeave: () => assert.fail("no leave: the trigger went with its owner"),
  });
  told.length = 0;
  list.move(visitor, 2, 0);
  list.check();
  // Moving left, the visitor crosses the owner's upper X bound (5) before the bystander's (4).
  assert.deepEqual(told, ["owner saw 2", "+2", "-1"]);
  assert.equal(owner.rangeNode, null);
});

Deno.test("range list: a handler that throws leaves the lists sound and the rest of the events deliverable", () => {
  const list = new RangeList();
  const owner = new Ent(1, 0, 0);
  list.add(owner);
  const got: number[] = [];
  list.addTrigger(owner, 5, {
    onEnter: (e) => {
      if (e.id === 2) throw new Error("script error");
      got.push(e.id);
    },
    onLeave: () => {},
  });
  list.add(new Ent(2, 100, 0));
  list.add(new Ent(3, 101, 0));
  // Both enter in one call; the first handler call throws, the second event stays queued.
  assert.throws(() => list.move(owner, 100, 0), /script error/);
  list.check();
  assert.equal(list.pendingEvents, 1);
  list.deliver();
  assert.deepEqual(got, [3]);
  assert.equal(list.pendingEvents, 0);
});
