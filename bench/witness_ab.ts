/**
 * `deno task bench witness_ab --against=DIR [--ticks=100] [--entities=10000] [--witnesses=1000] [--side=2000]
 * [--speed=1.5]`: the scene of `bench witness` built twice in one process, once from this checkout and once from the
 * checkout at DIR (a `git worktree` of another commit, say), ticked alternately, the order swapped every tick. Each
 * figure is the median over the timed ticks of this checkout's time over the other's, for the witness pass and for
 * the moves: the two share the machine's every disturbance, which on a shared machine moves separate runs by more
 * than most changes. The frames of both are hashed: equal hashes mean both sent the same bytes.
 */
import { parseArgs } from "node:util";
import { Witness } from "../cell/witness/witness.ts";
import { ClientWorld } from "../client/world.ts";
import { registry } from "../entities/mod.ts";
import { loneCell } from "../testing/lone_cell.ts";
import { scratch } from "../core/scratch.ts";
import { writeResults } from "./results.ts";
import { spread } from "./lib/passes.ts";
import {
  buildScene,
  DT,
  quietLog,
  type SceneModules,
  type SceneOptions,
  type WitnessScene,
} from "./lib/witness_scene.ts";

/** Untimed ticks first, for the JIT. */
export const WARMUP = 30;

/** One side: its scene, a running hash of every frame its witnesses sent, and the frames its clients still have to read. */
interface Side {
  scene: WitnessScene;
  hash: number;
  readonly worlds: ClientWorld[];
  readonly frames: Uint8Array[];
}

/** The modules of the checkout at `dir`, with its entity lives started at `life` (lives are random otherwise). */
async function modulesAt(dir: string, life: number): Promise<SceneModules> {
  const root = new URL(dir.endsWith("/") ? dir : dir + "/", `file://${Deno.cwd()}/`);
  const load = async (path: string) => {
    try {
      return await import(new URL(path, root).href);
    } catch (e) {
      throw new Error(`${dir}: cannot load ${path}; is it a checkout of this repository?`, { cause: e });
    }
  };
  const [w, c, ent, lone, sc] = await Promise.all([
    load("cell/witness/witness.ts"),
    load("client/world.ts"),
    load("entities/mod.ts"),
    load("testing/lone_cell.ts"),
    load("core/scratch.ts"),
  ]);
  sc.scratch.lives.next = life;
  return { Witness: w.Witness, ClientWorld: c.ClientWorld, registry: ent.registry, loneCell: lone.loneCell };
}

function side(modules: SceneModules, opts: SceneOptions): Side {
  const s: Side = { scene: null as unknown as WitnessScene, hash: 0, worlds: [], frames: [] };
  // Queued, not read, in the sink: as in `bench witness`, the clients read them after the pass, untimed.
  s.scene = buildScene(modules, opts, (_i, world, f) => {
    s.worlds.push(world);
    s.frames.push(f);
  });
  return s;
}

/** One tick of a side: [moves ms, witness pass ms]. */
function tick(s: Side): [number, number] {
  const t0 = performance.now();
  s.scene.move();
  const t1 = performance.now();
  s.scene.cell.tick(DT);
  const t2 = performance.now();
  let h = s.hash;
  for (let i = 0; i < s.frames.length; i++) {
    const f = s.frames[i];
    for (let k = 0; k < f.length; k++) h = (h * 31 + f[k]) | 0;
    s.worlds[i].receive(f);
  }
  s.hash = h;
  s.worlds.length = s.frames.length = 0;
  return [t1 - t0, t2 - t1];
}

async function commitOf(dir: string): Promise<string> {
  try {
    const out = await new Deno.Command("git", { args: ["-C", dir, "log", "-1", "--format=%h %s"], stderr: "null" })
      .output();
    return out.success ? new TextDecoder().decode(out.stdout).trim() : "(not a git checkout)";
  } catch {
    return "(git not found)";
  }
}

/** What one comparison found: medians of this checkout's per-tick times over the other's, and whether the bytes agree. */
export interface WitnessComparison {
  witness: number;
  moves: number;
  /** Median witness pass, ms, of this checkout and of the other. */
  ourMs: number;
  theirMs: number;
  /** Both sent the same bytes in every frame, in the same order. */
  sameBytes: boolean;
}

/** Builds the scene from this checkout and from the one at `against`, ticks both alternately, compares them. */
export async function compareWitness(against: string, opts: SceneOptions, ticks: number): Promise<WitnessComparison> {
  scratch.lives.next = 1;
  const ours = side({ Witness, ClientWorld, registry, loneCell }, opts);
  const theirs = side(await modulesAt(against, 1), opts);
  const witness: number[] = [], moves: number[] = [], ourMs: number[] = [], theirMs: number[] = [];
  for (let t = 0; t < WARMUP + ticks; t++) {
    let a: [number, number], b: [number, number];
    if (t % 2 === 0) (a = tick(ours)), (b = tick(theirs));
    else (b = tick(theirs)), (a = tick(ours));
    if (t < WARMUP) continue;
    moves.push(a[0] / b[0]);
    witness.push(a[1] / b[1]);
    ourMs.push(a[1]);
    theirMs.push(b[1]);
  }
  return {
    witness: spread(witness).median!,
    moves: spread(moves).median!,
    ourMs: spread(ourMs).median!,
    theirMs: spread(theirMs).median!,
    sameBytes: ours.hash === theirs.hash,
  };
}

/** Runs the comparison and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      against: { type: "string" },
      ticks: { type: "string", default: "100" },
      entities: { type: "string", default: "10000" },
      witnesses: { type: "string", default: "1000" },
      side: { type: "string", default: "2000" },
      speed: { type: "string", default: "1.5" },
    },
  });
  if (!values.against) throw new Error("--against=DIR: the checkout to compare this one with is missing");
  const ticks = Number(values.ticks);
  if (!(ticks >= 10 && ticks <= 10_000)) throw new Error(`--ticks: ${values.ticks} is not from 10 to 10000`);
  const opts: SceneOptions = {
    entities: Number(values.entities),
    witnesses: Number(values.witnesses),
    radius: 100,
    side: Number(values.side),
    speed: Number(values.speed),
    log: quietLog(),
  };
  const c = await compareWitness(values.against, opts, ticks);
  const md = `The scene of \`bench witness\` (${opts.entities.toLocaleString("en")} Avatars, ${
    opts.witnesses.toLocaleString("en")
  } witnesses, ${opts.side} m square, ${opts.speed} m/s) built from this checkout and from \`${values.against}\` (${await commitOf(
    values.against,
  )}) in one process, ticked alternately with the order swapped each tick; ${ticks} ticks after ${WARMUP}.

| figure | this / the other (median of per-tick ratios) |
| --- | ---: |
| witness pass | ${c.witness.toFixed(3)} (${c.ourMs.toFixed(2)} ms against ${c.theirMs.toFixed(2)} ms) |
| moves and triggers | ${c.moves.toFixed(3)} |
| frames | ${c.sameBytes ? "the same bytes" : "**different bytes**"} |`;
  console.log(md);
  await writeResults("witness_ab", md);
}
