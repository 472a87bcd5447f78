/**
 * `deno task bench wire [--seconds=S]`: throughput and round-trip latency of
 * core/wire between two processes over loopback, each figure beside a plain
 * loop that writes and reads the same bytes on a raw Deno TCP socket in the
 * same run, so that the cost of framing, encoding, decoding and dispatch
 * shows as a ratio. The far process is bench/wire_peer.ts.
 */
import { type Channel } from "../core/wire/mod.ts";
import { type MessageDef } from "../core/wire/mod.ts";
import { dial } from "../core/wire/mod.ts";
import { FrameWriter } from "../core/wire/mod.ts";
import { tick } from "../core/wire/mod.ts";
import { Blob, Count, Ping, RawMode } from "./wire_peer.ts";
import { writeResults } from "./results.ts";

const HOST = "127.0.0.1";
/** Messages sent per tick in the batched runs (and per raw write). */
const BATCH = 1000;
/** Frame sizes of the one-way runs, length prefix included. */
const FRAME_SIZES = [64, 512];
/** Frame size of a round-trip request. */
const PING_FRAME = 64;
/** Upper bounds on messages per run, besides the time bound. */
const MAX_BATCHED = 20_000_000;
const MAX_UNBATCHED = 2_000_000;
const MAX_ROUND_TRIPS = 20_000;
const WARMUP_ROUND_TRIPS = 2_000;
/** Unbatched loops let the event loop run after this many messages. */
const YIELD_EVERY = 128;
/** Untimed warm-up before each timed run, so that both sides are compiled. */
const WARMUP_MS = 300;
/** Each measurement alternates this many rounds of the wire and the raw loop. */
const ROUNDS = 4;

/** Counts of one timed throughput run. */
interface Throughput {
  frames: number;
  bytes: number;
  writes: number;
  seconds: number;
}

/** Round-trip samples of one latency run, in microseconds. */
interface Latency {
  p50: number;
  p99: number;
  mean: number;
  count: number;
}

/**
 * Yields to the event loop (a macrotask), so that pending socket operations
 * and timers run; a MessageChannel message costs microseconds where
 * `setTimeout(0)` costs milliseconds.
 */
class EventLoopYield {
  #port = new MessageChannel();
  #wake: (() => void) | null = null;

  constructor() {
    this.#port.port1.onmessage = () => {
      const wake = this.#wake;
      this.#wake = null;
      wake?.();
    };
  }

  next(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
      this.#port.port2.postMessage(0);
    });
  }

  close(): void {
    this.#port.port1.close();
    this.#port.port2.close();
  }
}

/** The peer process and the ports it listens on. */
interface Peer {
  child: Deno.ChildProcess;
  wirePort: number;
  rawPort: number;
}

async function startPeer(): Promise<Peer> {
  const here = (name: string) => decodeURIComponent(new URL(name, import.meta.url).pathname);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", here("../deno.json"), here("wire_peer.ts")],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = setTimeout(() => lines.cancel("peer too slow"), 30_000);
  try {
    while (!text.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("wire_peer exited before listening");
      text += value;
    }
  } catch (e) {
    kill(child);
    throw e;
  } finally {
    clearTimeout(deadline);
  }
  // Anything else the peer prints goes on to our stderr.
  (async () => {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) return;
      Deno.stderr.writeSync(new TextEncoder().encode(value));
    }
  })().catch(() => {});
  const ports = JSON.parse(text.slice(0, text.indexOf("\n")));
  return { child, wirePort: ports.wire, rawPort: ports.raw };
}

function kill(child: Deno.ChildProcess): void {
  try {
    Deno.kill(child.pid, "SIGTERM");
  } catch {
    // Already gone.
  }
}

/** The bytes of `[def.kind, reqId, ...args]` as the channel frames them. */
function frameOf<A extends unknown[]>(
  def: MessageDef<A, unknown>,
  reqId: number,
  ...args: A
): Uint8Array {
  const w = new FrameWriter(1024);
  w.push([def.kind, reqId, ...args]);
  return w.take().slice();
}

/** The Uint8Array payload whose frame (with `reqId`) is exactly `size` bytes. */
function payloadFor(
  def: MessageDef<[Uint8Array], unknown>,
  reqId: number,
  size: number,
): Uint8Array {
  for (let n = 0; n < size; n++) {
    const p = new Uint8Array(n).fill(0x5a);
    if (frameOf(def, reqId, p).length === size) return p;
  }
  throw new Error(`no payload makes a ${size}-byte frame`);
}

async function writeAll(conn: Deno.Conn, buf: Uint8Array): Promise<void> {
  let off = 0;
  while (off < buf.length) off += await conn.write(buf.subarray(off));
}

async function readExact(conn: Deno.Conn, buf: Uint8Array): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const n = await conn.read(buf.subarray(off));
    if (n === null) throw new Error("raw peer closed the connection early");
    off += n;
  }
}

/**
 * Sends Blob frames for `ms` or `max` messages, whichever comes first, in
 * ticks of `batch` messages (`batch` 0: flush after every message and wait
 * for its write), then waits until the peer has handled all of them.
 */
async function wireOneWay(
  ch: Channel,
  loop: EventLoopYield,
  payload: Uint8Array,
  batch: number,
  ms: number,
  max: number,
): Promise<Throughput> {
  const before = await ch.request(Count);
  const frameBytes = frameOf(Blob, 0, payload).length;
  const writes0 = ch.stats.writes;
  const t0 = performance.now();
  let sent = 0;
  if (batch > 0) {
    const body = () => {
      for (let i = 0; i < batch; i++) ch.send(Blob, payload);
    };
    while (sent < max && performance.now() - t0 < ms) {
      tick(body);
      sent += batch;
      // Backpressure: at most about one tick waits in this process.
      await loop.next();
      while (ch.buffered > 0) await loop.next();
    }
  } else {
    while (sent < max && performance.now() - t0 < ms) {
      const writes = ch.stats.writes;
      ch.send(Blob, payload);
      ch.flush();
      sent++;
      // A loopback write usually completes within a few microtasks; when the
      // socket is full it needs the event loop.
      for (let i = 0; ch.stats.writes === writes; i++) {
        await (i < 8 ? null : loop.next());
      }
      if (sent % YIELD_EVERY === 0) await loop.next();
    }
  }
  const after = await ch.request(Count);
  const seconds = (performance.now() - t0) / 1000;
  if (after - before !== sent) {
    throw new Error(`peer counted ${after - before} frames of ${sent} sent`);
  }
  return {
    frames: sent,
    bytes: sent * frameBytes,
    // Less the write of the closing Count request.
    writes: ch.stats.writes - writes0 - 1,
    seconds,
  };
}

/**
 * The same loop on a raw socket: writes `frame` repeated `batch` times per
 * write (`batch` 0: one frame per write) for `ms` or `max` frames, then waits
 * for the peer's count of the bytes it read.
 */
async function rawOneWay(
  port: number,
  loop: EventLoopYield,
  frame: Uint8Array,
  batch: number,
  ms: number,
  max: number,
): Promise<Throughput> {
  const conn = await Deno.connect({ hostname: HOST, port });
  try {
    conn.setNoDelay(true);
    await writeAll(conn, Uint8Array.of(RawMode.sink));
    const per = Math.max(batch, 1);
    const chunk = new Uint8Array(frame.length * per);
    for (let i = 0; i < per; i++) chunk.set(frame, i * frame.length);
    const t0 = performance.now();
    let sent = 0;
    let writes = 0;
    while (sent < max && performance.now() - t0 < ms) {
      await writeAll(conn, chunk);
      sent += per;
      writes++;
      if (batch > 0 || sent % YIELD_EVERY === 0) await loop.next();
    }
    await conn.closeWrite();
    const answer = new Uint8Array(8);
    await readExact(conn, answer);
    const seconds = (performance.now() - t0) / 1000;
    const counted = new DataView(answer.buffer).getFloat64(0);
    if (counted !== sent * frame.length) {
      throw new Error(`raw peer counted ${counted} of ${sent * frame.length}`);
    }
    return { frames: sent, bytes: counted, writes, seconds };
  } finally {
    conn.close();
  }
}

function latency(samples: number[]): Latency {
  const s = Float64Array.from(samples).sort();
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  let sum = 0;
  for (const v of s) sum += v;
  return {
    p50: at(0.5),
    p99: at(0.99),
    mean: sum / s.length,
    count: s.length,
  };
}

/** Appends the times in µs of sequential requests for `ms` or `max` round trips. */
async function wireRoundTrips(
  ch: Channel,
  payload: Uint8Array,
  ms: number,
  max: number,
  samples: number[],
): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < max && performance.now() - t0 < ms; i++) {
    const t = performance.now();
    const echoed = await ch.request(Ping, payload);
    samples.push((performance.now() - t) * 1000);
    if (echoed.length !== payload.length) throw new Error("bad echo");
  }
}

/** Opens a raw ping-pong connection: each `requestSize` bytes written get `replySize` back. */
async function openRawEcho(
  port: number,
  requestSize: number,
  replySize: number,
): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: HOST, port });
  conn.setNoDelay(true);
  const head = new Uint8Array(9);
  const view = new DataView(head.buffer);
  head[0] = RawMode.echo;
  view.setUint32(1, requestSize);
  view.setUint32(5, replySize);
  await writeAll(conn, head);
  await readExact(conn, new Uint8Array(1));
  return conn;
}

/** The same ping-pong on a raw socket: `request` out, `reply.length` bytes back. */
async function rawRoundTrips(
  conn: Deno.TcpConn,
  request: Uint8Array,
  reply: Uint8Array,
  ms: number,
  max: number,
  samples: number[],
): Promise<void> {
  const t0 = performance.now();
  for (let i = 0; i < max && performance.now() - t0 < ms; i++) {
    const t = performance.now();
    await writeAll(conn, request);
    await readExact(conn, reply);
    samples.push((performance.now() - t) * 1000);
  }
}

/** Sums the runs of one side. */
function total(runs: Throughput[]): Throughput {
  const sum: Throughput = { frames: 0, bytes: 0, writes: 0, seconds: 0 };
  for (const r of runs) {
    sum.frames += r.frames;
    sum.bytes += r.bytes;
    sum.writes += r.writes;
    sum.seconds += r.seconds;
  }
  return sum;
}

function parseSeconds(args: string[]): number {
  let seconds = 2;
  for (const a of args) {
    const m = /^--seconds=(\d+(?:\.\d+)?)$/.exec(a);
    if (!m) {
      throw new Error(`unknown argument "${a}"; usage: bench wire [--seconds=S]`);
    }
    seconds = Number(m[1]);
  }
  return seconds;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const fixed = (n: number, digits = 1) => n.toFixed(digits);
const mb = (t: Throughput) => t.bytes / t.seconds / 1e6;

/**
 * Runs the wire benchmark against a freshly spawned bench/wire_peer.ts,
 * prints the table and writes it into bench/RESULTS.md.
 */
export async function run(args: string[]): Promise<void> {
  const ms = parseSeconds(args) * 1000;
  const peer = await startPeer();
  const loop = new EventLoopYield();
  let ch: Channel | undefined;
  try {
    ch = await dial(`${HOST}:${peer.wirePort}`, { role: "tool" });
    const rows: string[] = [];
    for (const size of FRAME_SIZES) {
      const payload = payloadFor(Blob, 0, size);
      const frame = frameOf(Blob, 0, payload);
      for (const batch of [BATCH, 0]) {
        const max = batch > 0 ? MAX_BATCHED : MAX_UNBATCHED;
        const label = batch > 0 ? `batched, ${int(batch)} per tick` : "unbatched, flush per message";
        console.error(`wire: ${size} B ${label}…`);
        const wireRun = (t: number, n: number) => wireOneWay(ch!, loop, payload, batch, t, n);
        const rawRun = (t: number, n: number) => rawOneWay(peer.rawPort, loop, frame, batch, t, n);
        await wireRun(WARMUP_MS, max);
        await rawRun(WARMUP_MS, max);
        // Alternating rounds, so that both sides see the same machine load.
        const wireRuns: Throughput[] = [];
        const rawRuns: Throughput[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          wireRuns.push(await wireRun(ms / ROUNDS, max / ROUNDS));
          rawRuns.push(await rawRun(ms / ROUNDS, max / ROUNDS));
        }
        const wire = total(wireRuns);
        const raw = total(rawRuns);
        rows.push(
          `| ${size} B | ${label} | ${int(wire.frames / wire.seconds)} | ${fixed(mb(wire))} | ${
            fixed(wire.frames / wire.writes)
          } | ${int(raw.frames / raw.seconds)} | ${fixed(mb(raw))} | ${fixed(mb(wire) / mb(raw), 2)} |`,
        );
      }
    }

    console.error("wire: request/reply round trips…");
    // Request ids then stay within 256..65535 (3 msgpack bytes), so every
    // request frame has the size of `request`.
    const pingPayload = payloadFor(Ping, 1000, PING_FRAME);
    const request = frameOf(Ping, 1000, pingPayload);
    const replySize = frameOf(
      { kind: 6, name: "reply", check: () => null, from: ["tool"] },
      1000,
      pingPayload,
    ).length;
    for (let i = 0; i < 300; i++) await ch.request(Count);
    const reply = new Uint8Array(replySize);
    const echo = await openRawEcho(peer.rawPort, request.length, replySize);
    const wireSamples: number[] = [];
    const rawSamples: number[] = [];
    try {
      await wireRoundTrips(ch, pingPayload, WARMUP_MS, WARMUP_ROUND_TRIPS, []);
      await rawRoundTrips(echo, request, reply, WARMUP_MS, WARMUP_ROUND_TRIPS, []);
      const blocks = ROUNDS * 5;
      for (let r = 0; r < blocks; r++) {
        const n = MAX_ROUND_TRIPS / blocks;
        await wireRoundTrips(ch, pingPayload, ms / blocks, n, wireSamples);
        await rawRoundTrips(echo, request, reply, ms / blocks, n, rawSamples);
      }
    } finally {
      echo.close();
    }
    const wireRtt = latency(wireSamples);
    const rawRtt = latency(rawSamples);

    const rtt = (name: string, l: Latency) =>
      `| ${name} | ${fixed(l.p50)} | ${fixed(l.p99)} | ${fixed(l.mean)} | ${int(l.count)} |`;
    const markdown = [
      `Two processes on loopback (${HOST}), both on this machine: this one sends, bench/wire_peer.ts receives. Each figure is measured for ${
        ms / 1000
      } s per side (or a message count, whichever ends first) after a ${WARMUP_MS} ms warm-up, in rounds alternating the wire and the raw loop (${ROUNDS} rounds one way, ${
        ROUNDS * 5
      } blocks for round trips) so that both see the same machine load; MB = 10^6 bytes.`,
      "",
      `**One way.** Each message is the one-way \`bench.wire.blob\` with one Uint8Array argument sized so that its whole frame (4-byte length + msgpack \`[kind, 0, bin]\`) is exactly 64 B (${
        payloadFor(Blob, 0, 64).length
      }-byte payload) or 512 B (${
        payloadFor(Blob, 0, 512).length
      }-byte payload). The peer decodes, checks and dispatches every frame to a handler that counts it; the run ends when a \`Count\` request (answered after every earlier frame) confirms all of them. *Batched*: ${
        int(BATCH)
      } \`ch.send\` per \`tick()\`, then the event loop runs until the channel has handed its buffer to the socket. *Unbatched*: \`ch.send\` + \`ch.flush()\` per message, waiting for that write before the next. *Raw*: a plain \`Deno.connect\` socket writing the same frame bytes to a \`Deno.listen\` socket in the peer process that only reads them (64 KiB reads) and counts them: ${
        int(BATCH)
      } frames per write when batched, one frame per write unbatched, with the same event-loop yields.`,
      "",
      "| Frame | Sending | Wire frames/s | Wire MB/s | Wire frames/write | Raw frames/s | Raw MB/s | Wire/raw |",
      "|---|---|--:|--:|--:|--:|--:|--:|",
      ...rows,
      "",
      `Wire/raw = wire MB/s ÷ raw MB/s for the same bytes in the same write sizes: the share of the bare socket's throughput left after framing, msgpack encoding and decoding, checks and dispatch (1.00 would mean they cost nothing).`,
      "",
      `**Request/reply.** ${int(wireRtt.count)} (wire) and ${
        int(rawRtt.count)
      } (raw) sequential round trips, each awaited before the next. Wire: \`ch.request(Ping, payload)\`, whose ${pingPayload.length}-byte payload makes a ${request.length}-byte request frame and the peer's handler returns it, a ${replySize}-byte reply frame. Raw ping-pong: the same ${request.length} bytes written, ${replySize} bytes written back by the peer on a raw socket. Times in µs, from before the send until the reply has been read.`,
      "",
      "| Round trip | p50 µs | p99 µs | mean µs | count |",
      "|---|--:|--:|--:|--:|",
      rtt("wire request/reply", wireRtt),
      rtt("raw socket ping-pong", rawRtt),
      "",
      `Wire/raw round trip: p50 ×${fixed(wireRtt.p50 / rawRtt.p50, 2)}, p99 ×${
        fixed(wireRtt.p99 / rawRtt.p99, 2)
      } (the time framing, encoding, decoding, dispatch and the request bookkeeping add to a bare socket round trip).`,
    ].join("\n");
    console.log(markdown);
    await writeResults("wire", markdown);
  } finally {
    ch?.close("benchmark done");
    loop.close();
    kill(peer.child);
    await peer.child.status;
    try {
      await peer.child.stdin.close();
    } catch {
      // The peer is gone, and its stdin with it.
    }
  }
}
