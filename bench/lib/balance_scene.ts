/**
 * One scene of the balance benchmark: a 2 km space in 4 cells over 4 cellapps, a crowd of Marchers (the crowd game,
 * crowd_game.ts) that forms in one quadrant, walks to the next and gathers there, with balancing on or off. Once a
 * second it samples each cellapp's load (its share of the tick budget, what the balancer is told) and the space's
 * cells; every few seconds it lists every real over the cellapps (lost or doubled entities); a few bots stand in
 * the crowd's two places and check each Marcher's once-a-second beat for gaps and reordering.
 */
import { errorText } from "../../core/errors.ts";
import { type Client, connect } from "../../client/client.ts";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import type { CellEntityView } from "../../core/views.ts";
import { cpuSeconds } from "./procs.ts";
import { json, startBenchCluster } from "./cluster.ts";
import type { Placement } from "./placement.ts";
import { registry } from "./crowd_game.ts";

const GAME = new URL("./crowd_game.ts", import.meta.url).pathname;
const SIDE = 2000;
/** Where the crowd gathers first (the middle of the low-x, low-z quadrant), and then (the next quadrant in x). */
const FIRST: [number, number] = [500, 500];
const THEN: [number, number] = [1500, 500];
/** How far around its place the crowd spreads (m), its walking speed, and its speed between the places (m/s). */
const SPREAD = 250;
const SPEED = 10;
const RUSH = 50;

/** What one scene runs. */
export interface SceneOptions {
  /** AoI radius (m); null for the default. */
  aoi: number | null;
  balance: boolean;
  npcs: number;
  bots: number;
  /** Seconds the crowd stays in its first place, and seconds sampled after it has gathered in the second. */
  firstS: number;
  secondS: number;
}

/** One second's sample. */
export interface Sample {
  /** Seconds since the crowd of this phase formed. */
  t: number;
  phase: "first" | "transit" | "second";
  /** Each cellapp's load (share of its tick budget). */
  loads: number[];
  /** Highest over mean of `loads`. */
  ratio: number;
  cells: number;
  /** The narrowest cell's width on its narrower side (m). */
  narrowest: number;
}

/** How one phase went. */
export interface PhaseResult {
  /** Highest over mean in the first samples (the crowd in one cell). */
  startRatio: number;
  /** Seconds from the crowd forming to the first sample within 15 % of the mean; null if none in the window. */
  within15: number | null;
  /** Of the samples from then to the window's end, the share within 15 %. */
  heldShare: number;
  /** Highest over mean in the last 20 s: median and worst. */
  lastMedian: number;
  lastWorst: number;
  /** The cellapps' mean load over the last 20 s (share of the tick budget). */
  lastMeanLoad: number;
  /** The same judged on CPU (/proc) over the last 20 s of the window: the busiest cellapp over the mean. */
  cpuRatio: number;
  narrowest: number;
  seconds: number;
}

/** The outcome of one scene. */
export interface SceneResult {
  options: SceneOptions;
  ghostRadius: number;
  first: PhaseResult;
  second: PhaseResult;
  cellsAdded: number;
  cellsRetired: number;
  /** Marchers never listed at the end, and listed real twice in two polls in a row at any time. */
  lost: number;
  doubled: number;
  /** Marchers still listed real twice when the run ended (after up to 10 s of settling). */
  doubledAtEnd: number;
  /** Each double as seen: the entity, when, and the cellapps that listed it. */
  doubledSeen: string[];
  /** Bot observations: beats seen, gaps (a beat skipped while in view), reorders (a beat lower than one seen). */
  bots: { connected: number; beats: number; gaps: number; reorders: number; errors: string[] };
  samples: Sample[];
}

/** Runs one scene; every process it starts is stopped before it returns. */
export async function runScene(o: SceneOptions, place: Placement, pids: number[]): Promise<SceneResult> {
  const cluster = await startBenchCluster(
    [
      "--cellapps=4",
      `--baseapps=${o.bots > 0 ? 1 : 0}`,
      "--npcs=0",
      "--kv=:memory:",
      `--game=${GAME}`,
      "--log-level=warn",
      "--client-spawn",
      "--login-rate=1000",
      ...(o.aoi !== null ? [`--aoi-radius=${o.aoi}`] : []),
    ],
    { cellapps: 4, baseapp: o.bots > 0 },
    place.spawn,
    place.reach,
  );
  pids.push(...cluster.processes.map((p) => p.pid));
  const admin = cluster.admin;
  const clients: Client[] = [];
  try {
    const { id } = await json<{ id: number }>(
      `${admin}/api/spaces`,
      post({
        bounds: [0, 0, SIDE, SIDE],
        cells: 4,
        balance: o.balance,
      }),
    );
    const view0 = await json<SpaceView>(`${admin}/api/spaces/${id}`);
    const ghostRadius = view0.settings.ghostRadius;
    const cluster0 = await json<ClusterView>(`${admin}/api/cluster`);
    const cellapps = cluster0.processes.filter((p) => p.role === "cellapp");
    const clientUrl = cluster0.processes.find((p) => p.role === "baseapp")?.clientUrl;
    let phaseNow = "before the crowd";
    const bots = new BeatBots(() => phaseNow);
    if (o.bots > 0 && clientUrl) {
      await bots.start(o.bots, await place.reach(clientUrl), id, clients);
    }
    const initialCells = new Set(view0.cells.map((c) => c.id));
    const seenCells = new Set(initialCells);
    const goneCells = new Set<number>();
    const census = new Census(admin, id, cellapps.map((c) => c.id));

    await json(
      `${admin}/api/spaces/${id}/entities`,
      post({
        entities: [{
          type: "Marcher",
          count: o.npcs,
          position: [FIRST[0], 0, FIRST[1]],
          props: {
            toX: FIRST[0],
            toZ: FIRST[1],
            thenX: THEN[0],
            thenZ: THEN[1],
            spread: SPREAD,
            speed: SPEED,
            rushSpeed: RUSH,
            leaveAfter: o.firstS,
          },
        }],
      }),
    );
    const formed = performance.now();
    // The last of them reaches the second place after about this long on the way.
    const transitS = (THEN[0] - FIRST[0] + SPREAD) / RUSH;
    const secondFormed = formed + (o.firstS + transitS) * 1000;
    const end = secondFormed + o.secondS * 1000;
    const samples: Sample[] = [];
    const cpu: { t: number; phase: Sample["phase"]; secs: number[] }[] = [];
    let nextCensus = performance.now();
    for (let next = formed + 1000; next < end; next += 1000) {
      await sleepUntil(next);
      const now = performance.now();
      const phase = now < formed + o.firstS * 1000 ? "first" : now < secondFormed ? "transit" : "second";
      phaseNow = `${phase} place, ${Math.round((now - formed) / 1000)} s after the spawn`;
      const [c, s] = await Promise.all([
        json<ClusterView>(`${admin}/api/cluster`),
        json<SpaceView>(`${admin}/api/spaces/${id}`),
      ]);
      const loads = cellapps.map((a) => c.processes.find((p) => p.id === a.id)?.load ?? 0);
      const mean = loads.reduce((x, y) => x + y, 0) / loads.length;
      for (const cell of s.cells) seenCells.add(cell.id);
      for (const cid of seenCells) if (!s.cells.some((cell) => cell.id === cid)) goneCells.add(cid);
      samples.push({
        t: (now - (phase === "second" ? secondFormed : formed)) / 1000,
        phase,
        loads,
        ratio: mean > 0 ? Math.max(...loads) / mean : 1,
        cells: s.cells.length,
        narrowest: Math.min(...s.cells.map((x) => Math.min(x.rect[2] - x.rect[0], x.rect[3] - x.rect[1]))),
      });
      cpu.push({ t: now, phase, secs: cellapps.map((a) => cpuSeconds(a.pid) ?? 0) });
      if (now >= nextCensus) {
        await census.poll(phaseNow);
        nextCensus = now + 5000;
      }
    }
    const { lost, doubledAtEnd } = await census.final(o.npcs);
    return {
      options: o,
      ghostRadius,
      first: judge(samples, cpu, "first", o.firstS),
      second: judge(samples, cpu, "second", o.secondS),
      cellsAdded: [...seenCells].filter((c) => !initialCells.has(c)).length,
      cellsRetired: goneCells.size,
      lost,
      doubled: census.doubled.size,
      doubledAtEnd,
      doubledSeen: census.seen,
      bots: { connected: clients.length, ...bots.tally },
      samples,
    };
  } finally {
    for (const c of clients) c.close();
    await cluster.stop();
  }
}

function post(body: unknown): RequestInit {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
}

async function sleepUntil(t: number): Promise<void> {
  const ms = t - performance.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}

/** A phase's figures from its samples. */
function judge(
  samples: Sample[],
  cpu: { t: number; phase: Sample["phase"]; secs: number[] }[],
  phase: Sample["phase"],
  windowS: number,
): PhaseResult {
  const s = samples.filter((x) => x.phase === phase);
  const first = s.findIndex((x) => x.ratio <= 1.15);
  const after = first >= 0 ? s.slice(first) : [];
  const tailSamples = s.filter((x) => x.t > windowS - 20);
  const last = tailSamples.map((x) => x.ratio).sort((a, b) => a - b);
  const meanLoads = tailSamples.map((x) => x.loads.reduce((p, q) => p + q, 0) / x.loads.length);
  const c = cpu.filter((x) => x.phase === phase);
  const tail = c.filter((x) => x.t >= c[c.length - 1].t - 20_000);
  let cpuRatio = NaN;
  if (tail.length >= 2) {
    const secs = (tail[tail.length - 1].t - tail[0].t) / 1000;
    const used = tail[0].secs.map((a, i) => (tail[tail.length - 1].secs[i] - a) / secs);
    const mean = used.reduce((x, y) => x + y, 0) / used.length;
    cpuRatio = mean > 0 ? Math.max(...used) / mean : NaN;
  }
  return {
    startRatio: Math.max(...s.slice(0, 5).map((x) => x.ratio)),
    within15: first >= 0 ? s[first].t : null,
    heldShare: after.length > 0 ? after.filter((x) => x.ratio <= 1.15).length / after.length : 0,
    lastMedian: last.length > 0 ? last[Math.floor(last.length / 2)] : NaN,
    lastWorst: last.length > 0 ? last[last.length - 1] : NaN,
    lastMeanLoad: meanLoads.length > 0 ? meanLoads.reduce((p, q) => p + q, 0) / meanLoads.length : NaN,
    cpuRatio,
    narrowest: Math.min(...s.map((x) => x.narrowest)),
    seconds: s.length,
  };
}

/** Every real Marcher over the space's cellapps, polled now and then. */
class Census {
  /** Marchers listed real twice in two polls in a row (a hand-over between two reads may show one twice once). */
  readonly doubled = new Set<number>();
  /** Each double as seen: the entity, when, and the cellapps listing it. */
  readonly seen: string[] = [];
  #twiceBefore = new Set<number>();

  constructor(private readonly admin: string, private readonly spaceId: number, private readonly cellapps: number[]) {}

  /** Lists every real once; returns the ids and those listed twice, and notes doubles (`when` says when). */
  async poll(when: string): Promise<{ ids: Set<number>; twice: Set<number> }> {
    const lists = await Promise.all(this.cellapps.map(async (a) => {
      const r = await fetch(`${this.admin}/api/cellapps/${a}/cells/${this.spaceId}`);
      return r.ok ? ((await r.json()) as { entities: CellEntityView[] }).entities : (await r.body?.cancel(), []);
    }));
    const ids = new Set<number>();
    const twice = new Set<number>();
    const where = new Map<number, number[]>();
    lists.forEach((list, i) => {
      for (const e of list) {
        if (!e.real || e.type !== "Marcher") continue;
        (ids.has(e.id) ? twice : ids).add(e.id);
        where.set(e.id, [...(where.get(e.id) ?? []), this.cellapps[i]]);
      }
    });
    for (const id of twice) {
      if (!this.#twiceBefore.has(id)) continue;
      if (!this.doubled.has(id)) this.seen.push(`entity ${id} (${when}) on cellapps ${where.get(id)!.join(" and ")}`);
      this.doubled.add(id);
    }
    this.#twiceBefore = twice;
    return { ids, twice };
  }

  /** How many of `count` are missing, and how many listed twice, once the listing settles (up to 10 s). */
  async final(count: number): Promise<{ lost: number; doubledAtEnd: number }> {
    let got = { ids: new Set<number>(), twice: new Set<number>() };
    for (let i = 0; i < 20; i++) {
      got = await this.poll("at the end");
      if (got.ids.size === count && got.twice.size === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    return { lost: count - got.ids.size, doubledAtEnd: got.twice.size };
  }
}

/** Bots standing in the crowd's two places, checking every Marcher's beat they see. */
class BeatBots {
  readonly tally = { beats: 0, gaps: 0, reorders: 0, errors: [] as string[] };

  /** `phase` says when a problem is seen. */
  constructor(private readonly phase: () => string) {}

  async start(count: number, url: string, spaceId: number, clients: Client[]): Promise<void> {
    for (let i = 0; i < count; i++) {
      const [cx, cz] = i % 2 === 0 ? FIRST : THEN;
      const position = { x: cx + 100 * Math.cos(i), y: 0, z: cz + 100 * Math.sin(i) };
      try {
        const c = await connect(url, { name: `balance-bot-${i}`, password: "bot", spaceId, position }, { registry });
        clients.push(c);
        this.#watch(c);
      } catch (e) {
        this.tally.errors.push(`bot ${i}: ${errorText(e)}`);
      }
    }
  }

  #watch(c: Client): void {
    const world = c.world;
    if (!world) return;
    const last = new Map<number, number>();
    const inView = new Map<number, number>();
    const see = (id: number, v: unknown) => {
      if (typeof v !== "number") return;
      const l = last.get(id), iv = inView.get(id);
      if (l !== undefined && v < l) {
        this.tally.reorders++;
        if (this.tally.errors.length < 10) {
          this.tally.errors.push(`entity ${id}: beat ${l} then ${v} (${this.phase()})`);
        }
      }
      if (iv !== undefined && v > iv + 1) {
        this.tally.gaps++;
        if (this.tally.errors.length < 10) {
          this.tally.errors.push(`entity ${id}: beat ${iv} then ${v} in view (${this.phase()})`);
        }
      }
      this.tally.beats++;
      last.set(id, v);
      inView.set(id, v);
    };
    world.on("enter", (ev) => {
      if (ev.entity.type.name !== "Marcher") return;
      inView.delete(ev.entity.id);
      see(ev.entity.id, ev.entity.props.beat);
    });
    world.on("leave", (ev) => inView.delete(ev.entity.id));
    world.on("property", (ev) => ev.name === "beat" && see(ev.entity.id, ev.value));
  }
}
