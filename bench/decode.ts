/**
 * `deno task bench decode [--only=NAME,...]`: what decoding one frame costs,
 * in heap bytes per wire byte and in time, for hostile msgpack shapes (1 MiB
 * and 16 MiB) and for real messages, decoded as before (the msgpack Decoder
 * alone) and through FrameReader (scanMsgpack first, then the Decoder). Each
 * measurement runs in a fresh child process (`--v8-flags=--expose-gc`), so
 * that one shape's garbage, hidden classes or key cache do not count for the
 * next; the figures go to bench/RESULTS.md and show whether the weights of
 * core/bytes/msgpack_cost.ts bound the real cost.
 */
import { errorText } from "../core/errors.ts";
import { Decoder } from "@msgpack/msgpack";
import { FrameReader, FrameWriter, NONE, wireCodec } from "../core/wire/mod.ts";
import { DEFAULT_MSGPACK_LIMITS, lastScanCost, scanMsgpack } from "../core/bytes/mod.ts";
import { writeResults } from "./results.ts";
import { FIXED_SIZE, HOSTILE, LEGIT } from "./lib/decode_bodies.ts";

const MiB = 1024 * 1024;
/** Memory cap of a child; the old decoder needs about 2.7 GB for the deepest 16 MiB frame. */
const CHILD_HEAP_MB = 6000;
/** A child that takes longer than this is killed and reported as such. */
const CHILD_TIMEOUT_MS = 120_000;
/** Small frames are decoded repeatedly for this long to time them. */
const TIMING_MS = 300;

// ---------------------------------------------------------------------------
// One measurement, in a child process.

interface Measure {
  name: string;
  mode: "decoder" | "frameReader";
  wire: number;
  /** Estimated cost (COST units) per wire byte; null when the scan stops before the end. */
  estimate: number | null;
  /** Heap (heapUsed + external) kept by the decoded value, per wire byte, after a full GC. */
  kept: number;
  /** The same, in bytes (for bodies of a few bytes). */
  keptBytes: number;
  /** Medians of both ways timed by turns in the same process, for quick decodes. */
  both: { decoder: number; frameReader: number } | null;
  /** Heap grown during the decode (garbage included), per wire byte. */
  peak: number;
  ms: number;
  refused: string | null;
  error: string | null;
}

function bodyOf(kind: string, name: string, size: number): Uint8Array {
  if (kind === "hostile") return HOSTILE[name].body(size);
  const w = new FrameWriter(1024, 64 * MiB);
  w.push(LEGIT[name].frame());
  return w.take().slice(4);
}

function memory(): number {
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

function child(kind: string, name: string, size: number, mode: Measure["mode"]): Measure {
  const gc = (globalThis as unknown as { gc?: () => void }).gc;
  if (!gc) throw new Error("run the child with --v8-flags=--expose-gc");
  const body = bodyOf(kind, name, size);
  const unlimited = { ...DEFAULT_MSGPACK_LIMITS, maxLength: 2 ** 32, maxItems: 2 ** 32, costPerByte: Infinity };
  const estimate = scanMsgpack(body, unlimited) === null ? lastScanCost() / body.length : null;
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setUint32(0, body.length);
  frame.set(body, 4);
  const decoder = new Decoder({ extensionCodec: wireCodec });
  // A small body is decoded many times over, every value kept, so that its
  // heap figure is not lost in the noise of the GC.
  const copies = body.length < MiB ? Math.min(100_000, Math.ceil((4 * MiB) / body.length)) : 1;
  const makeReader = (n: number) => {
    const r = new FrameReader(64 * MiB);
    for (let i = 0; i < n; i++) r.push(frame);
    return r;
  };
  const once = (reader: FrameReader | null): unknown => reader ? reader.next() : decoder.decode(body);
  // Warm the code paths on a small frame of the same kinds.
  const warm = new FrameWriter();
  warm.push([1, 0, { a: [1.5, "x", new Uint8Array(2)], b: {} }]);
  const wr = new FrameReader();
  wr.push(warm.take());
  if (wr.next() === NONE) throw new Error("warm-up frame not decoded");
  decoder.decode(Uint8Array.of(0x92, 0x01, 0xa1, 0x61));
  // And the paths that refuse a frame, so that their first compilation is not counted.
  const refuse = new FrameReader();
  refuse.push(Uint8Array.of(0, 0, 0, 2, 0x91, 0x91));
  try {
    refuse.next();
  } catch {
    // Refused, as meant.
  }
  try {
    decoder.decode(Uint8Array.of(0x91));
  } catch {
    // Truncated, as meant.
  }
  // A small body is read once first: what its first reading compiles is not its cost.
  if (body.length < 64 * 1024) {
    try {
      once(mode === "frameReader" ? makeReader(1) : null);
    } catch {
      // Measured below.
    }
  }
  const reader = mode === "frameReader" ? makeReader(copies) : null;
  const values: unknown[] = new Array(copies).fill(null);
  gc();
  gc();
  const before = memory();
  let refused: string | null = null;
  let error: string | null = null;
  const t0 = performance.now();
  try {
    for (let i = 0; i < copies; i++) values[i] = once(reader);
  } catch (e) {
    const msg = errorText(e);
    if (mode === "frameReader" && msg.startsWith("frame body refused: ")) refused = msg.slice(20);
    else error = `${(e as Error).name}: ${msg}`;
  }
  let ms = (performance.now() - t0) / copies;
  const grown = memory() - before;
  gc();
  gc();
  const kept = memory() - before;
  const decoded = refused || error ? 1 : copies;
  // Quick ones are timed again, warm, one decode at a time, and the median
  // kept: real messages both ways by turns, so that both see the same machine
  // load; hostile bodies only the way of this child (the decoder alone can
  // take seconds on them). FrameReader.next() is timed as what it does, the
  // scan and then the decoder, without copying the frame into a new reader
  // each time (garbage that would be collected in the timed part).
  let both: { decoder: number; frameReader: number } | null = null;
  if (ms < 50) {
    const times = { decoder: [] as number[], frameReader: [] as number[] };
    const ways = kind === "legit" ? (["decoder", "frameReader"] as const) : [mode];
    const until = performance.now() + TIMING_MS;
    while (performance.now() < until && times[mode].length < 10_000) {
      for (const way of ways) {
        const t = performance.now();
        try {
          if (way === "decoder" || scanMsgpack(body) === null) decoder.decode(body);
        } catch {
          // Same outcome as the first time.
        }
        times[way].push(performance.now() - t);
      }
    }
    const median = (a: number[]) => a.length ? a.sort((x, y) => x - y)[a.length >> 1] : NaN;
    both = { decoder: median(times.decoder), frameReader: median(times.frameReader) };
    ms = both[mode];
    if (kind !== "legit") both = null;
  }
  const value = values;
  (globalThis as unknown as { keep: unknown }).keep = value;
  return {
    name,
    mode,
    wire: body.length,
    estimate,
    kept: Math.max(0, kept / (decoded * body.length)),
    keptBytes: Math.max(0, kept / decoded),
    both,
    peak: grown / (decoded * body.length),
    ms,
    refused,
    error,
  };
}

async function spawnChild(kind: string, name: string, size: number, mode: Measure["mode"]): Promise<Measure> {
  const here = decodeURIComponent(new URL("./decode.ts", import.meta.url).pathname);
  const config = decodeURIComponent(new URL("../deno.json", import.meta.url).pathname);
  const cmd = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      config,
      `--v8-flags=--expose-gc,--max-old-space-size=${CHILD_HEAP_MB}`,
      here,
      kind,
      name,
      String(size),
      mode,
    ],
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(CHILD_TIMEOUT_MS),
  });
  const out = await cmd.output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success || !text) {
    const err = new TextDecoder().decode(out.stderr).trim().split("\n").slice(-2).join(" ");
    return {
      name,
      mode,
      wire: size,
      estimate: null,
      kept: NaN,
      keptBytes: NaN,
      both: null,
      peak: NaN,
      ms: NaN,
      refused: null,
      error: out.signal ? `killed (${out.signal}) after ${CHILD_TIMEOUT_MS / 1000} s or out of memory` : err,
    };
  }
  return JSON.parse(text) as Measure;
}

// ---------------------------------------------------------------------------

const fmt = (n: number | null, digits = 1) => n === null || Number.isNaN(n) ? "—" : n.toFixed(digits);
const ms = (n: number) => Number.isNaN(n) ? "—" : n < 0.1 ? n.toFixed(3) : n < 10 ? n.toFixed(2) : n.toFixed(0);
const size = (n: number) =>
  n >= 1000 * 1024 ? `${(n / MiB).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`;

function outcome(m: Measure): string {
  if (m.error) return `error: ${m.error.slice(0, 100)}`;
  if (m.refused) {
    return `refused: ${m.refused.replace(/ \(body of .*$/, "").replace(/ of the \d+-byte body.*/, "").slice(0, 100)}`;
  }
  return "decoded";
}

/** Heap kept per wire byte, or in bytes for a body of a few bytes. */
function kept(m: Measure): string {
  if (Number.isNaN(m.kept)) return "—";
  return m.wire < 16 ? `${Math.round(m.keptBytes)} B` : m.kept.toFixed(1);
}

/** Runs the measurements and writes their tables into bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  let only: Set<string> | null = null;
  for (const a of args) {
    const m = /^--only=(.+)$/.exec(a);
    if (!m) throw new Error(`unknown argument "${a}"; usage: bench decode [--only=NAME,...]`);
    only = new Set(m[1].split(","));
  }
  const pair = async (kind: string, name: string, s: number) => {
    console.error(`decode: ${name}${s ? ` ${size(s)}` : ""}…`);
    const before = await spawnChild(kind, name, s, "decoder");
    const after = await spawnChild(kind, name, s, "frameReader");
    // Quick decodes are timed both ways in the same process, by turns.
    const t = kind === "legit" && after.both ? after.both : { decoder: before.ms, frameReader: after.ms };
    return { before, after, t, estimate: before.estimate ?? after.estimate };
  };
  const hostileRows: string[] = [];
  for (const name of Object.keys(HOSTILE)) {
    if (only && !only.has(name)) continue;
    for (const s of FIXED_SIZE.has(name) ? [0] : [MiB, 16 * MiB]) {
      const { before, after, t, estimate } = await pair("hostile", name, s);
      const err = before.error ? ` (${before.error.replace(/^\w*Error: /, "").slice(0, 40)})` : "";
      hostileRows.push(
        `| ${name} | ${size(before.wire)} | ${fmt(estimate)} | ${kept(before)} | ${fmt(before.peak)} | ${
          ms(t.decoder)
        }${err} | ${kept(after)} | ${ms(t.frameReader)} | ${outcome(after)} |`,
      );
    }
  }
  const legitRows: string[] = [];
  for (const name of Object.keys(LEGIT)) {
    if (only && !only.has(name)) continue;
    const { before, after, t, estimate } = await pair("legit", name, 0);
    const l = DEFAULT_MSGPACK_LIMITS;
    const budget = l.costPerByte * before.wire + l.costAllowance;
    const used = estimate === null ? "—" : `${((estimate * before.wire) / budget * 100).toFixed(0)} %`;
    legitRows.push(
      `| ${name} | ${size(before.wire)} | ${fmt(estimate)} | ${used} | ${kept(before)} | ${kept(after)} | ${
        ms(t.decoder)
      } | ${ms(t.frameReader)} | ${fmt((t.frameReader / t.decoder - 1) * 100, 0)} % | ${outcome(after)} |`,
    );
  }
  const l = DEFAULT_MSGPACK_LIMITS;
  const markdown = [
    `Each row is measured in fresh child processes (\`--v8-flags=--expose-gc\`). *Before* is the msgpack Decoder alone, as FrameReader decoded every frame until now; *after* is FrameReader today: scanMsgpack (core/bytes/msgpack_limits.ts), then the Decoder. *Kept* is heapUsed + external held by the decoded value after two forced GCs, per wire byte of the body (bodies under 1 MiB are decoded many times over, every value kept, for a stable figure); *peak* is the growth during the decode, garbage included; *est.* is the scan's cost estimate per wire byte (— when the scan cannot reach the end). Times are one decode (*after*: the scan, then the decoder when the scan accepts); under 50 ms they are medians of repeated, warm decodes (for real messages, before and after by turns in one process), else the first and only one. Limits: maxDepth ${l.maxDepth}, maxLength ${l.maxLength}, maxItems ${l.maxItems}, cost ≤ ${l.costPerByte} × size + ${l.costAllowance}.`,
    "",
    "**Hostile bodies.**",
    "",
    "| Shape | Body | est./B | before kept/B | before peak/B | before ms | after kept/B | after ms | after |",
    "|---|--:|--:|--:|--:|--:|--:|--:|---|",
    ...hostileRows,
    "",
    ...Object.entries(HOSTILE).filter(([n]) => !only || only.has(n)).map(([n, h]) => `- ${n}: ${h.what}`),
    "",
    "**Real messages**, framed as a channel frames them. *Budget* is the share of the cost limit the estimate uses; *scan* is what the scan adds to the decode.",
    "",
    "| Message | Body | est./B | budget | before kept/B | after kept/B | before ms | after ms | scan | after |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ...legitRows,
    "",
    ...Object.entries(LEGIT).filter(([n]) => !only || only.has(n)).map(([n, h]) => `- ${n}: ${h.what}`),
  ].join("\n");
  console.log(markdown);
  if (!only) await writeResults("decode", markdown);
}

if (import.meta.main) {
  const [kind, name, s, mode] = Deno.args;
  console.log(JSON.stringify(child(kind, name, Number(s), mode as Measure["mode"])));
}
