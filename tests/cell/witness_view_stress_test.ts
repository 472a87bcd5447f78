/**
 * An observer's view of a mover stays right while everything else around it churns: entities entering, leaving,
 * being destroyed and made again with the same id, some with ids beyond 32 bits, changing properties, within tight
 * byte budgets and few aliases, with garbage collections in between (entity rows are freed when their entities
 * are collected, see cell/witness/entity_rows.ts), and entities so far out of the world that their distance
 * overflows. After every burst the queue is let drain, and what the client decoded of every entity it sees must be
 * where the server has it. Seeded: a failure names the seed and step to replay.
 */
import assert from "node:assert/strict";
import { registry } from "../../entities/mod.ts";
import { Cell } from "../../cell/cell.ts";
import type { Entity } from "../../cell/entity.ts";
import { Witness } from "../../cell/witness/witness.ts";
import { ClientWorld } from "../../client/world.ts";
import { loneCell } from "../../testing/lone_cell.ts";

function makeCell(): Cell {
  return loneCell({ registry, bounds: [-500, -500, 500, 500] }).cell;
}

/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Lets collected entities' rows go back to the free list (FinalizationRegistry callbacks run as tasks). */
async function collect(): Promise<void> {
  if (gc) gc();
  else {
    // Without --expose-gc: enough garbage that the young generation is collected a few times.
    let keep = 0;
    for (let i = 0; i < 2000; i++) keep += new Array(256).fill(i).length;
    if (keep < 0) throw new Error("unreachable");
  }
  await new Promise((r) => setTimeout(r, 0));
}

/** Options of one run. */
interface RunOptions {
  aoiRadius: number;
  bytesPerTick: number;
  maxAliases: number;
  /** Other players with witnesses of their own, which come and go. */
  watchers: number;
}

async function run(seed: number, steps: number, o: RunOptions): Promise<void> {
  const rand = rng(seed);
  const pick = <T>(a: T[]): T => a[Math.floor(rand() * a.length)];
  const cell = makeCell();
  const observer = cell.createEntity("Avatar", { x: 0, y: 0, z: 0 }, { playerName: "b" });
  const mover = cell.createEntity("Avatar", { x: 2, y: 0, z: 0 }, { playerName: "a" });
  // Client→server requests travel a few ticks (the baseapp and the network are in between).
  let inFlight: [number, Uint8Array][] = [];
  const errors: string[] = [];
  const world = new ClientWorld(registry, { send: (b) => inFlight.push([1 + Math.floor(rand() * 3), b]) });
  world.setPlayer(observer.id, observer.type);
  const witness = new Witness(
    observer,
    {
      aoiRadius: o.aoiRadius,
      hysteresis: 5,
      bytesPerTick: o.bytesPerTick,
      maxAliases: o.maxAliases,
      requestTimeoutMs: 3000,
      historyHorizonMs: 2000,
    },
    (f) => {
      try {
        world.receive(f);
      } catch (e) {
        // As the SDK does: the rest of the frame is lost, and the view with it.
        errors.push(`step ${step}: ${(e as Error).message}`);
      }
    },
  );
  const others: Entity[] = [];
  const watchers: Entity[] = [];
  let step = 0;
  const tick = () => {
    const due = inFlight.filter((m) => --m[0] <= 0);
    inFlight = inFlight.filter((m) => m[0] > 0);
    for (const [, b] of due) if (!witness.destroyed) witness.receive(b);
    for (const e of others) {
      if (rand() < 0.3) e.position = { x: e.x + rand() - 0.5, y: 0, z: e.z + rand() - 0.5 };
    }
    cell.tick(100);
  };
  const spot = () => ({ x: (rand() - 0.5) * o.aoiRadius * 3, y: 0, z: (rand() - 0.5) * o.aoiRadius * 3 });
  const watch = (e: Entity) => new Witness(e, { aoiRadius: o.aoiRadius, bytesPerTick: o.bytesPerTick }, () => {});
  for (; step < steps; step++) {
    const burst = 1 + Math.floor(rand() * 12);
    for (let i = 0; i < burst; i++) {
      const r = rand();
      if (r < 0.2 || others.length < 5) {
        // Some with ids beyond 32 bits (they go up to 2^48, core/bytes/ids.ts).
        const id = rand() < 0.3 ? 2 ** 47 + step * 16 + i : undefined;
        others.push(cell.createEntity("NPC", spot(), { name: `n${step}` }, [0, 0, 0], id));
      } else if (r < 0.3) {
        const e = pick(others);
        others.splice(others.indexOf(e), 1);
        cell.destroyEntity(e);
      } else if (r < 0.4) {
        // Made again with the same id (a relog, a base that lost its cell entity): another life.
        const e = pick(others), id = e.id;
        others.splice(others.indexOf(e), 1);
        cell.destroyEntity(e);
        if (rand() < 0.5) tick();
        others.push(cell.createEntity("NPC", spot(), { name: `r${step}` }, [0, 0, 0], id));
      } else if (r < 0.55) pick(others).position = spot();
      else if (r < 0.65) pick(others).container.set("hp", Math.floor(rand() * 1000));
      else if (r < 0.7) pick(others).container.set("mood", Math.floor(rand() * 200));
      else if (r < 0.75 && watchers.length < o.watchers) {
        const e = cell.createEntity("Avatar", spot(), { playerName: `w${step}` });
        watchers.push(e);
        watch(e);
      } else if (r < 0.8 && watchers.length > 0) {
        const e = pick(watchers);
        watchers.splice(watchers.indexOf(e), 1);
        cell.destroyEntity(e);
      } else if (r < 0.9) tick();
      else if (r < 0.92) await collect();
      else if (r < 0.93) {
        // Out of the world upwards, inside the AoI square (a height a broken base or real sent that no check
        // stopped): its distance overflows to infinity.
        const e = cell.createEntity("NPC", { x: rand() * 20 - 10, y: 0, z: rand() * 20 - 10 }, { name: "odd" });
        e.y = pick([1e308, -1e308, 1e200]);
        others.push(e);
      }
    }
    mover.position = { x: mover.x + (rand() < 0.5 ? 0.5 : -0.5), y: 0, z: mover.z };
    if (mover.x > 20 || mover.x < -20) mover.position = { x: 2, y: 0, z: 0 };
    if (rand() < 0.3) tick();
    if (step % 4 !== 3) continue;
    // Let the queue drain: nothing but the mover's neighbours' wandering changes for a while.
    for (let i = 0; i < 60; i++) tick();
    assert.deepEqual(errors, [], `seed ${seed}: the client could not read what it was sent`);
    const seen = world.entities.get(mover.id);
    assert.ok(seen, `seed ${seed} step ${step}: the observer does not see the mover`);
    const bound = world.positionErrorBound(mover.position);
    assert.ok(
      Math.abs(seen.position.x - mover.x) <= bound.x + 1e-6 && Math.abs(seen.position.z - mover.z) <= bound.z + 1e-6,
      `seed ${seed} step ${step}: the observer sees the mover at ${JSON.stringify(seen.position)}, the server has ` +
        `(${mover.x}, ${mover.z})`,
    );
    for (const e of world.entities.values()) {
      const real = cell.entities.get(e.id);
      assert.ok(real, `seed ${seed} step ${step}: the client still holds ${e.id}, which is gone`);
    }
  }
}

const SEEDS = Number(Deno.env.get("STRESS_SEEDS") ?? 6);

Deno.test("an observer's view of a mover stays right while entities around it come, go and are made again", async () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    await run(seed, 120, { aoiRadius: 40, bytesPerTick: 200, maxAliases: 8, watchers: 3 });
    await run(seed + 1000, 120, { aoiRadius: 500, bytesPerTick: 1400, maxAliases: 255, watchers: 3 });
  }
});

Deno.test("an entity out of the world in the AoI does not stop the observer's queue", () => {
  const cell = makeCell();
  const observer = cell.createEntity("Avatar", { x: 0, y: 0, z: 0 }, { playerName: "b" });
  const mover = cell.createEntity("Avatar", { x: 2.5, y: 0, z: 0 }, { playerName: "a" });
  const world = new ClientWorld(registry, { send: (b) => witness.receive(b) });
  world.setPlayer(observer.id, observer.type);
  const witness = new Witness(observer, {}, (f) => world.receive(f));
  // Inside the AoI square, out of the world upwards: its distance overflows to infinity.
  const odd = cell.createEntity("NPC", { x: 10, y: 0, z: 10 }, { name: "odd" });
  odd.y = 1e308;
  for (let i = 0; i < 5; i++) cell.tick(100);
  assert.equal(witness.stateOf(odd), "CREATED");
  // A crowd close by, moving: more than the byte budget for a while, so that not everything is sent each tick.
  const crowd: Entity[] = [];
  for (let i = 0; i < 300; i++) {
    crowd.push(cell.createEntity("NPC", { x: (i % 20) - 10, y: 0, z: Math.floor(i / 20) - 7 }, { name: "n" }));
  }
  for (let i = 0; i < 20; i++) {
    for (const n of crowd) n.position = { x: n.x + 0.3, y: 0, z: n.z };
    cell.tick(100);
  }
  for (let i = 0; i < 20; i++) cell.tick(100);
  mover.position = { x: 5, y: 0, z: 0 };
  for (let i = 0; i < 20; i++) cell.tick(100);
  const seen = world.entities.get(mover.id)?.position.x ?? NaN;
  assert.ok(Math.abs(seen - 5) < 0.05, `the observer sees the mover at x=${seen}; it is at 5`);
  for (const n of crowd) {
    const x = world.entities.get(n.id)?.position.x ?? NaN;
    assert.ok(Math.abs(x - n.x) < 0.05, `the observer sees NPC ${n.id} at x=${x}; it is at ${n.x}`);
  }
});

Deno.test("an entity whose id needs more than 32 bits is seen by its alias, and what follows it in a frame too", () => {
  const cell = makeCell();
  const observer = cell.createEntity("Avatar", { x: 0, y: 0, z: 0 }, { playerName: "b" });
  const errors: string[] = [];
  const world = new ClientWorld(registry, { send: (b) => witness.receive(b) });
  world.setPlayer(observer.id, observer.type);
  const witness = new Witness(observer, {}, (f) => {
    try {
      world.receive(f);
    } catch (e) {
      errors.push((e as Error).message);
    }
  });
  // Entity ids go up to 2^48 (core/bytes/ids.ts); the big one is sent first (nearer), the mover after it.
  const big = cell.createEntity("NPC", { x: 1, y: 0, z: 0 }, { name: "big" }, [0, 0, 0], 2 ** 47 + 5);
  const mover = cell.createEntity("Avatar", { x: 2.5, y: 0, z: 0 }, { playerName: "a" });
  for (let i = 0; i < 5; i++) cell.tick(100);
  for (let i = 1; i <= 5; i++) {
    big.position = { x: 1, y: 0, z: i * 0.5 };
    mover.position = { x: 2.5 + i * 0.5, y: 0, z: 0 };
    cell.tick(100);
  }
  for (let i = 0; i < 5; i++) cell.tick(100);
  assert.deepEqual(errors, []);
  const seenBig = world.entities.get(big.id)?.position, seenMover = world.entities.get(mover.id)?.position;
  assert.ok(seenBig && Math.abs(seenBig.z - 2.5) < 0.05, `the big id is seen at ${JSON.stringify(seenBig)}`);
  assert.ok(seenMover && Math.abs(seenMover.x - 5) < 0.05, `the mover is seen at ${JSON.stringify(seenMover)}`);
});
