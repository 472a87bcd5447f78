/**
 * The bytes a client receives because its entity changed cell, measured in process: two cells of one space linked
 * in memory (testing/two_cells.ts), players with witnesses walking back and forth across the border among
 * NPCs, every frame decoded by a client world. Compares each player's bytes in the ticks of a hand-over (the tick
 * it offloads and the next) with its bytes in the other ticks, and counts entities that left and re-entered its
 * view within a hand-over (there should be none).
 */
import { registry } from "../entities/mod.ts";
import type { Entity } from "../cell/entity.ts";
import { configureSpaceAoI, Witness, witnessOf } from "../cell/witness/witness.ts";
import { ClientWorld } from "../client/world.ts";
import { twoCellsOf } from "../testing/two_cells.ts";

/** The figures. */
export interface HandoverFigures {
  players: number;
  npcs: number;
  ticks: number;
  handOvers: number;
  /** Mean bytes per player per tick, in hand-over ticks and in the others. */
  handOverTickBytes: number;
  ordinaryTickBytes: number;
  /** Leaves followed by an enter of the same entity within a hand-over window. */
  reEnters: number;
}

/** Runs `ticks` ticks with `players` players and `npcs` NPCs; deterministic. */
export async function measureHandovers(players = 20, npcs = 200, ticks = 600): Promise<HandoverFigures> {
  let seed = 7;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const bytes = new Map<number, number>();
  const worlds = new Map<number, ClientWorld>();
  const sinks = new Map<number, (f: Uint8Array) => void>();
  const h = twoCellsOf({ registry, cfg: { ghostRadius: 45 }, clientSink: (e) => sinks.get(e.id) });
  for (const c of [h.a, h.b]) configureSpaceAoI(c, { aoiRadius: 30, hysteresis: 5 });
  const real = (id: number): Entity => h.a.entities.get(id) ?? h.b.entities.get(id)!;
  for (let i = 0; i < npcs; i++) {
    const x = 40 + rnd() * 120;
    (x < 100 ? h.a : h.b).createEntity("NPC", { x, y: 0, z: rnd() * 100 });
  }
  const ids: number[] = [];
  for (let i = 0; i < players; i++) {
    const p = h.a.createEntity("Avatar", { x: 60 + rnd() * 30, y: 0, z: 5 + rnd() * 90 });
    const world = new ClientWorld(registry, { send: (b) => witnessOf(real(p.id))!.receive(b) });
    world.setPlayer(p.id, p.type);
    const sink = (f: Uint8Array) => {
      bytes.set(p.id, (bytes.get(p.id) ?? 0) + f.length);
      world.receive(f);
    };
    sinks.set(p.id, sink);
    worlds.set(p.id, world);
    new Witness(p, {}, sink);
    ids.push(p.id);
  }
  const dir = new Map(ids.map((id) => [id, 1]));
  let handOvers = 0, reEnters = 0, hoBytes = 0, hoN = 0, ordBytes = 0, ordN = 0;
  const window = new Map<number, number>(); // player → ticks left in its hand-over window
  const leftNow = new Map<number, Set<number>>();
  for (const [id, w] of worlds) {
    leftNow.set(id, new Set());
    w.on("leave", (ev) => window.has(id) && leftNow.get(id)!.add(ev.entity.id));
    w.on("enter", (ev) => window.has(id) && leftNow.get(id)!.has(ev.entity.id) && reEnters++);
  }
  for (let t = 0; t < ticks; t++) {
    for (const c of [h.a, h.b]) {
      for (const e of c.entities.values()) {
        if (e.type.name !== "NPC") continue;
        const x = Math.min(199, Math.max(1, e.x + (rnd() - 0.5) * 2)), z = Math.min(99, Math.max(1, e.z + rnd() - 0.5));
        c.moveEntity(e, x, 0, z);
        if (rnd() < 0.02) e.props.mood = Math.floor(rnd() * 5);
      }
    }
    const before = new Map(ids.map((id) => [id, real(id).cell]));
    for (const id of ids) {
      const p = real(id);
      if (p.x > 140) dir.set(id, -1);
      if (p.x < 60) dir.set(id, 1);
      p.cell.moveEntity(p, p.x + dir.get(id)! * 1.5, 0, p.z);
      bytes.set(id, 0);
    }
    await h.tick(1);
    for (const id of ids) {
      if (real(id).cell !== before.get(id)) {
        handOvers++;
        window.set(id, 2);
        leftNow.get(id)!.clear();
      }
      const n = bytes.get(id)!;
      if (t < 20) continue; // everyone's first view
      if (window.has(id)) {
        hoBytes += n;
        hoN++;
        const left = window.get(id)! - 1;
        if (left === 0) window.delete(id);
        else window.set(id, left);
      } else {
        ordBytes += n;
        ordN++;
      }
    }
  }
  return {
    players,
    npcs,
    ticks,
    handOvers,
    handOverTickBytes: hoBytes / Math.max(1, hoN),
    ordinaryTickBytes: ordBytes / Math.max(1, ordN),
    reEnters,
  };
}
