/**
 * The far process of the wire benchmark (bench/wire.ts), not a benchmark of
 * its own. It listens on loopback twice: a WireServer that counts one-way
 * frames and answers requests, and a raw TCP socket that only reads and
 * counts bytes (or echoes a fixed number of bytes), so the two can be
 * compared. It prints `{"wire":PORT,"raw":PORT}` on one stdout line once both
 * listen, and exits when its stdin closes (or after ten minutes at most).
 */
import { errorText } from "../core/errors.ts";
import { message } from "../core/wire/mod.ts";
import { Handlers } from "../core/wire/mod.ts";
import { WireServer } from "../core/wire/mod.ts";
import { check } from "../core/wire/mod.ts";

const { bytes, tuple } = check;

/** One-way message of the throughput runs; the peer only counts it. */
export const Blob = message<[Uint8Array]>(
  1010,
  "bench.wire.blob",
  tuple(bytes(4096)),
  ["tool"],
);

/**
 * Replies how many Blob frames the peer has handled. Frames are handled in
 * order, so the reply also says every earlier frame has arrived.
 */
export const Count = message<[], number>(1011, "bench.wire.count", tuple(), ["tool"]);

/** Request of the round-trip run; the reply is the same bytes. */
export const Ping = message<[Uint8Array], Uint8Array>(
  1012,
  "bench.wire.ping",
  tuple(bytes(4096)),
  ["tool"],
);

/**
 * First byte of a raw connection. `sink`: the peer reads and counts bytes
 * until the sender closes its write side, then answers the count as a
 * big-endian float64. `echo`: two big-endian uint32 follow (request size,
 * reply size); the peer acknowledges with one byte, then answers every
 * request-size bytes read with reply-size bytes.
 */
export const RawMode = { sink: 1, echo: 2 } as const;

/** Bytes of each raw read, as many as a channel's FrameReader asks for. */
const READ_SIZE = 64 * 1024;

/** Reads exactly `buf.length` bytes; false if the stream ended first. */
async function readExact(conn: Deno.Conn, buf: Uint8Array): Promise<boolean> {
  let off = 0;
  while (off < buf.length) {
    const n = await conn.read(buf.subarray(off));
    if (n === null) return false;
    off += n;
  }
  return true;
}

async function writeAll(conn: Deno.Conn, buf: Uint8Array): Promise<void> {
  let off = 0;
  while (off < buf.length) off += await conn.write(buf.subarray(off));
}

async function sink(conn: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(READ_SIZE);
  let total = 0;
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    total += n;
  }
  const answer = new Uint8Array(8);
  new DataView(answer.buffer).setFloat64(0, total);
  await writeAll(conn, answer);
}

async function echo(conn: Deno.Conn): Promise<void> {
  const head = new Uint8Array(8);
  if (!(await readExact(conn, head))) return;
  const view = new DataView(head.buffer);
  const requestSize = view.getUint32(0);
  const reply = new Uint8Array(view.getUint32(4)).fill(0xa5);
  await writeAll(conn, Uint8Array.of(1));
  const buf = new Uint8Array(READ_SIZE);
  let got = 0;
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) return;
    got += n;
    while (got >= requestSize) {
      got -= requestSize;
      await writeAll(conn, reply);
    }
  }
}

async function serveRaw(conn: Deno.TcpConn): Promise<void> {
  conn.setNoDelay(true);
  try {
    const mode = new Uint8Array(1);
    if (!(await readExact(conn, mode))) return;
    if (mode[0] === RawMode.sink) await sink(conn);
    else if (mode[0] === RawMode.echo) await echo(conn);
  } catch (e) {
    console.error(`wire_peer: raw connection failed: ${errorText(e)}`);
  } finally {
    try {
      conn.close();
    } catch {
      // Already closed.
    }
  }
}

async function main(): Promise<void> {
  let blobs = 0;
  const handlers = new Handlers()
    .on(Blob, (_ch, _payload) => void blobs++)
    .on(Count, () => blobs)
    .on(Ping, (_ch, payload) => payload);
  const server = new WireServer({
    host: "127.0.0.1",
    port: 0,
    role: "tool",
    handlers,
  });
  const raw = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  (async () => {
    for await (const conn of raw) serveRaw(conn);
  })().catch(() => {});
  console.log(JSON.stringify({ wire: server.port, raw: raw.addr.port }));

  // The benchmark kills this process; its stdin closing (the benchmark died)
  // or the time limit ends it as well.
  const limit = setTimeout(() => Deno.exit(3), 10 * 60 * 1000);
  for await (const _ of Deno.stdin.readable) { /* ignore input */ }
  clearTimeout(limit);
  Deno.exit(0);
}

if (import.meta.main) await main();
