/**
 * `deno task bench aoi [--json] [--sizes=1000,10000,50000]`: the range list against a uniform grid and brute force.
 *
 * N entities random-walk 0.5 m per tick over 2 km x 2 km (reflecting at the edges); every tenth owns a square
 * trigger of half-side 100 m. Per tick each method turns the tick's positions into the tick's enter/leave pairs:
 * the range list by moving every entity (its triggers fire), the grid (100 m cells) and brute force by recomputing
 * each trigger's contents and diffing with the last tick's. The first ticks check that all three agree; the figures
 * are medians of the timed ticks.
 */
import {
  type RangeEntity,
  type RangeHandler,
  RangeList,
  type RangeNode,
  type RangeTrigger,
} from "../cell/range/mod.ts";
import { writeResults } from "./results.ts";
import { seededRandom } from "../core/random.ts";

const SIZE = 2000, STEP = 0.5, RADIUS = 100, CELL = 100, VERIFY_TICKS = 3;
/** Untimed ticks after the verification ones, enough entity moves for the JIT to settle (a cellapp runs for hours). */
const WARM_MOVES = 200_000;

/**
 * An entity whose position lives in a Float64Array, as the grid's positions do: the range list writes every move
 * into its entity, and a number written into an object field is a fresh heap allocation, which writing a typed
 * array is not. A cellapp writes its entities' positions whatever finds the enter/leave pairs.
 */
class Ent implements RangeEntity {
  rangeNode: RangeNode | null = null;
  constructor(readonly id: number, readonly pos: Float64Array, x: number, z: number) {
    pos[2 * id] = x;
    pos[2 * id + 1] = z;
  }
  get x(): number {
    return this.pos[2 * this.id];
  }
  set x(v: number) {
    this.pos[2 * this.id] = v;
  }
  get z(): number {
    return this.pos[2 * this.id + 1];
  }
  set z(v: number) {
    this.pos[2 * this.id + 1] = v;
  }
}

/** Enter/leave pairs of one tick as parallel arrays (trigger index, entity id). */
class Pairs {
  enterT: number[] = [];
  enterE: number[] = [];
  leaveT: number[] = [];
  leaveE: number[] = [];
  clear(): void {
    this.enterT.length =
      this.enterE.length =
      this.leaveT.length =
      this.leaveE.length =
        0;
  }
  get count(): number {
    return this.enterT.length + this.leaveT.length;
  }
  /** Net change per pair as sorted keys; an enter and a leave of one pair in one tick cancel. */
  net(): string[] {
    const m = new Map<string, number>();
    for (let i = 0; i < this.enterT.length; i++) {
      const k = `${this.enterT[i]}:${this.enterE[i]}`;
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    for (let i = 0; i < this.leaveT.length; i++) {
      const k = `${this.leaveT[i]}:${this.leaveE[i]}`;
      m.set(k, (m.get(k) ?? 0) - 1);
    }
    return [...m].filter(([, v]) => v !== 0).map(([k, v]) => (v > 0 ? "+" : "-") + k).sort();
  }
}

class Recorder implements RangeHandler {
  constructor(readonly index: number, readonly out: Pairs) {}
  onEnter(e: RangeEntity): void {
    this.out.enterT.push(this.index);
    this.out.enterE.push(e.id);
  }
  onLeave(e: RangeEntity): void {
    this.out.leaveT.push(this.index);
    this.out.leaveE.push(e.id);
  }
}

/** Recomputes each trigger's square from scratch (the grid's cells or every entity) and diffs with last tick. */
class Recompute {
  readonly members: number[][];
  readonly next: number[][];
  readonly mark: Uint32Array;
  stamp = 0;
  readonly cols = Math.ceil(SIZE / CELL) + 1;
  readonly cells: number[][] = [];
  readonly cellOf: Int32Array;
  readonly slot: Int32Array;

  constructor(readonly x: Float64Array, readonly z: Float64Array, readonly owners: Int32Array, readonly grid: boolean) {
    const n = x.length;
    this.mark = new Uint32Array(n);
    this.members = Array.from({ length: owners.length }, () => []);
    this.next = Array.from({ length: owners.length }, () => []);
    this.cellOf = new Int32Array(n);
    this.slot = new Int32Array(n);
    for (let c = 0; c < this.cols * this.cols; c++) this.cells.push([]);
    for (let i = 0; i < n; i++) {
      const c = this.cellIndex(x[i], z[i]);
      this.cellOf[i] = c;
      this.slot[i] = this.cells[c].length;
      this.cells[c].push(i);
    }
  }

  cellIndex(x: number, z: number): number {
    return Math.floor(z / CELL) * this.cols + Math.floor(x / CELL);
  }

  /** Applies a tick's positions and writes its enter/leave pairs. */
  tick(nx: Float64Array, nz: Float64Array, out: Pairs): void {
    const { x, z } = this;
    x.set(nx);
    z.set(nz);
    if (this.grid) {
      for (let i = 0; i < x.length; i++) {
        const c = this.cellIndex(x[i], z[i]), old = this.cellOf[i];
        if (c === old) continue;
        const from = this.cells[old], s = this.slot[i], last = from.pop()!;
        if (last !== i) (from[s] = last), (this.slot[last] = s);
        this.slot[i] = this.cells[c].length;
        this.cells[c].push(i);
        this.cellOf[i] = c;
      }
    }
    for (let t = 0; t < this.owners.length; t++) {
      const o = this.owners[t], lx = x[o] - RADIUS, ux = x[o] + RADIUS, lz = z[o] - RADIUS, uz = z[o] + RADIUS;
      const now = this.next[t];
      now.length = 0;
      if (this.grid) {
        const c0 = Math.max(0, Math.floor(lx / CELL)), c1 = Math.min(this.cols - 1, Math.floor(ux / CELL));
        const r0 = Math.max(0, Math.floor(lz / CELL)), r1 = Math.min(this.cols - 1, Math.floor(uz / CELL));
        for (let r = r0; r <= r1; r++) {
          for (let c = c0; c <= c1; c++) {
            const ids = this.cells[r * this.cols + c];
            for (let k = 0; k < ids.length; k++) {
              const i = ids[k], ex = x[i], ez = z[i];
              if (ex >= lx && ex <= ux && ez >= lz && ez <= uz && i !== o) now.push(i);
            }
          }
        }
      } else {
        for (let i = 0; i < x.length; i++) {
          const ex = x[i], ez = z[i];
          if (ex >= lx && ex <= ux && ez >= lz && ez <= uz && i !== o) now.push(i);
        }
      }
      this.diff(t, out);
    }
  }

  diff(t: number, out: Pairs): void {
    const was = this.members[t], now = this.next[t], mark = this.mark;
    const s = (this.stamp += 2);
    for (let k = 0; k < was.length; k++) mark[was[k]] = s;
    for (let k = 0; k < now.length; k++) {
      const i = now[k];
      if (mark[i] === s) mark[i] = s + 1;
      else out.enterT.push(t), out.enterE.push(i);
    }
    for (let k = 0; k < was.length; k++) if (mark[was[k]] === s) out.leaveT.push(t), out.leaveE.push(was[k]);
    this.members[t] = now;
    this.next[t] = was;
  }
}

/**
 * Applies a tick's positions to the range list: its counterpart of `Recompute.tick`, and like it a function of its
 * own, so that the JIT compiles it for this loop and not as a part of `measure`.
 */
function moveAll(list: RangeList, ents: Ent[], nx: Float64Array, nz: Float64Array): void {
  for (let i = 0; i < ents.length; i++) list.move(ents[i], nx[i], nz[i]);
}

const rng = seededRandom;

/**
 * The median of a method's tick times: on a machine shared with other work a tick that another process interrupts
 * costs many times the rest, and a mean over a few milliseconds of ticks is mostly those.
 */
function median(ms: number[]): number {
  const s = [...ms].sort((p, q) => p - q), m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

interface Figures {
  entities: number;
  triggers: number;
  msPerTick: number;
  gridMsPerTick: number;
  bruteMsPerTick: number;
  ticks: number;
  bruteTicks: number;
  eventsPerTick: number;
  setupMs: number;
}

function measure(n: number, ticks: number, bruteTicks: number): Figures {
  const r = rng(n);
  const x = new Float64Array(n), z = new Float64Array(n);
  for (let i = 0; i < n; i++) (x[i] = r() * SIZE), (z[i] = r() * SIZE);
  const owners = Int32Array.from({ length: Math.floor(n / 10) }, (_, k) => k * 10);

  const t0 = performance.now();
  const list = new RangeList();
  const pos = new Float64Array(2 * n);
  const ents = Array.from({ length: n }, (_, i) => new Ent(i, pos, x[i], z[i]));
  for (const e of ents) list.add(e);
  const rlPairs = new Pairs();
  const triggers: RangeTrigger[] = [];
  for (let t = 0; t < owners.length; t++) {
    triggers.push(list.addTrigger(ents[owners[t]], RADIUS, new Recorder(t, rlPairs)));
  }
  const setupMs = performance.now() - t0;
  const grid = new Recompute(x.slice(), z.slice(), owners, true);
  const brute = new Recompute(x.slice(), z.slice(), owners, false);
  const gridPairs = new Pairs(), brutePairs = new Pairs();
  grid.tick(x, z, gridPairs);
  brute.tick(x, z, brutePairs);

  const nx = new Float64Array(n), nz = new Float64Array(n);
  const rlMs: number[] = [], gridMs: number[] = [], bruteMs: number[] = [];
  let events = 0;
  const warm = Math.ceil(WARM_MOVES / n), first = VERIFY_TICKS + warm;
  for (let tick = 0; tick < first + ticks; tick++) {
    for (let i = 0; i < n; i++) {
      const a = r() * 2 * Math.PI;
      let px = x[i] + STEP * Math.cos(a), pz = z[i] + STEP * Math.sin(a);
      if (px < 0) px = -px;
      else if (px > SIZE) px = 2 * SIZE - px;
      if (pz < 0) pz = -pz;
      else if (pz > SIZE) pz = 2 * SIZE - pz;
      nx[i] = x[i] = px;
      nz[i] = z[i] = pz;
    }
    const measured = tick >= first;
    const verify = tick < VERIFY_TICKS;
    // Brute force warms up too where it is timed on more than one tick, so that it diffs tick by tick.
    const runBrute = verify || (bruteTicks > 0 && tick < first + bruteTicks);
    rlPairs.clear(), gridPairs.clear(), brutePairs.clear();

    let s = performance.now();
    moveAll(list, ents, nx, nz);
    if (measured) rlMs.push(performance.now() - s), (events += rlPairs.count);
    s = performance.now();
    grid.tick(nx, nz, gridPairs);
    if (measured) gridMs.push(performance.now() - s);
    if (runBrute) {
      s = performance.now();
      brute.tick(nx, nz, brutePairs);
      if (measured) bruteMs.push(performance.now() - s);
    }
    if (verify) {
      const a = rlPairs.net(), b = gridPairs.net(), c = brutePairs.net();
      if (JSON.stringify(a) !== JSON.stringify(b) || JSON.stringify(b) !== JSON.stringify(c)) {
        throw new Error(
          `N=${n} tick ${tick}: range list ${a.length}, grid ${b.length}, brute ${c.length} changes differ`,
        );
      }
      for (let t = 0; t < triggers.length; t++) {
        const want = [...brute.members[t]].sort((p, q) => p - q).join();
        const got = [...triggers[t].entities()].map((e) => e.id).sort((p, q) => p - q).join();
        if (got !== want) throw new Error(`N=${n} tick ${tick}: trigger ${t} holds a different set`);
      }
    }
  }
  // The timed ticks must have kept the range list right too: its sets against the grid's after the last one.
  for (let t = 0; t < triggers.length; t++) {
    const want = [...grid.members[t]].sort((p, q) => p - q).join();
    const got = [...triggers[t].entities()].map((e) => e.id).sort((p, q) => p - q).join();
    if (got !== want) throw new Error(`N=${n} after the timed ticks: trigger ${t} holds a different set`);
  }
  if (bruteMs.length === 0) {
    // Brute force was only run on the verification ticks: time one more tick alone.
    const s = performance.now();
    brute.tick(x, z, brutePairs);
    bruteMs.push(performance.now() - s);
  }
  return {
    entities: n,
    triggers: owners.length,
    msPerTick: median(rlMs),
    gridMsPerTick: median(gridMs),
    bruteMsPerTick: median(bruteMs),
    ticks,
    bruteTicks: bruteMs.length,
    eventsPerTick: events / ticks,
    setupMs,
  };
}

const round = (v: number): number => Math.round(v * 1000) / 1000;

/** Runs the benchmark; `--json` prints one JSON line per N, `--sizes=a,b` picks the entity counts. */
export async function run(args: string[]): Promise<void> {
  const json = args.includes("--json");
  const sizesArg = args.find((a) => a.startsWith("--sizes="));
  const sizes = sizesArg ? sizesArg.slice(8).split(",").map(Number) : [1000, 10000, 50000];
  const rows: Figures[] = [];
  for (const n of sizes) {
    const f = measure(n, n <= 1000 ? 1000 : n <= 10000 ? 100 : 30, n <= 10000 ? 30 : 0);
    rows.push(f);
    if (json) {
      const { entities, triggers, msPerTick, gridMsPerTick, bruteMsPerTick } = f;
      console.log(JSON.stringify({
        entities,
        triggers,
        msPerTick: round(msPerTick),
        gridMsPerTick: round(gridMsPerTick),
        bruteMsPerTick: round(bruteMsPerTick),
      }));
    } else {
      console.log(
        `N=${n}: range list ${f.msPerTick.toFixed(3)} ms/tick, grid ${f.gridMsPerTick.toFixed(3)}, ` +
          `brute ${f.bruteMsPerTick.toFixed(3)} (${f.eventsPerTick.toFixed(0)} events/tick)`,
      );
    }
  }
  const table = rows.map((f) =>
    `| ${f.entities} | ${f.triggers} | ${f.msPerTick.toFixed(3)} | ${f.gridMsPerTick.toFixed(3)} | ` +
    `${f.bruteMsPerTick.toFixed(2)} | ${(f.gridMsPerTick / f.msPerTick).toFixed(1)}x | ` +
    `${(f.bruteMsPerTick / f.msPerTick).toFixed(0)}x | ${
      f.eventsPerTick.toFixed(0)
    } | ${f.ticks} / ${f.bruteTicks} | ` +
    `${f.setupMs.toFixed(0)} |`
  ).join("\n");
  await writeResults(
    "aoi",
    `Entities random-walk ${STEP} m per tick over ${SIZE} m x ${SIZE} m; every tenth owns a square trigger of ` +
      `half-side ${RADIUS} m. Time per tick to turn the tick's positions into its enter/leave pairs: the range list ` +
      `moves every entity (bounds expand, entity shuffles, bounds contract; events queued and delivered to a ` +
      `handler that records them); the grid (${CELL} m cells) and brute force recompute each trigger's square and ` +
      `diff it with the previous tick's. The first ${VERIFY_TICKS} ticks are untimed and check that the three give ` +
      `the same net enter/leave pairs and that every trigger holds the brute-force set; then ` +
      `${WARM_MOVES.toLocaleString("en")} / N untimed ticks let the JIT settle, as it has in a running cellapp. The ` +
      `entities keep their positions in a Float64Array, as the grid does (a number written into an object field is ` +
      `a heap allocation). Each figure is the median of the timed ticks (the machine is shared; an interrupted tick ` +
      `costs many times the rest). Brute force at 50,000 is timed on a single tick.\n\n` +
      `| entities | triggers | range list ms/tick | grid ms/tick | brute ms/tick | grid / range list | ` +
      `brute / range list | events/tick | ticks timed (list, grid / brute) | list setup ms |\n` +
      `|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n${table}`,
  );
}
