/**
 * The two-process relay floor of `deno task bench floor` (variant `deno-relay`): the least a baseapp and a cellapp
 * must do between them for the peer scenario's traffic, with no game. The front is the core/ws server the baseapp
 * runs, on the same (epoll) sockets; it forwards each client message to the back over one TCP connection, as records
 * of the batch that one turn of the event loop read (the wire between our processes batches so). The back keeps each client's latest message
 * and, at each 100 ms tick, sends one batch with a `down`-byte frame for every client; the front writes each frame to
 * its client's socket. Records are [u32 client][u16 length][bytes], little-endian, in frames of [u32 length][records].
 */
import { serveWebSocket, type WsConn } from "../../core/ws/mod.ts";

const TICK_MS = 100;
const RECORD_HEAD = 6;

/** Writes `bytes` to `conn` in full, after what was queued before it. */
class Writer {
  #chain: Promise<void> = Promise.resolve();
  constructor(readonly conn: Deno.Conn) {}
  write(bytes: Uint8Array): void {
    this.#chain = this.#chain.then(async () => {
      for (let off = 0; off < bytes.length;) off += await this.conn.write(bytes.subarray(off));
    }).catch(() => {}); // the connection is gone: so is the relay
  }
}

/**
 * Reads [u32 length][body] frames (little-endian) from `conn` until it ends, calling `onBody` with each body (a view
 * into the read buffer, valid during the call; `view` spans that buffer).
 */
export async function readFrames(conn: Deno.Conn, onBody: (body: Uint8Array, view: DataView) => void): Promise<void> {
  let buf = new Uint8Array(64 * 1024), start = 0, end = 0;
  for (;;) {
    if (buf.length - end < 16 * 1024) {
      const need = end - start + 16 * 1024;
      if (need > buf.length) {
        const next = new Uint8Array(need * 2);
        next.set(buf.subarray(start, end));
        buf = next;
      } else buf.copyWithin(0, start, end);
      end -= start;
      start = 0;
    }
    const n = await conn.read(buf.subarray(end));
    if (n === null) return;
    end += n;
    const view = new DataView(buf.buffer);
    while (end - start >= 4) {
      const len = view.getUint32(start, true);
      if (end - start < 4 + len) break;
      onBody(buf.subarray(start + 4, start + 4 + len), view);
      start += 4 + len;
    }
    if (start === end) start = end = 0;
  }
}

/** A growable buffer of records, sent as one frame. */
class Batch {
  #buf = new Uint8Array(16 * 1024);
  #view = new DataView(this.#buf.buffer);
  #pos = 4;
  get empty(): boolean {
    return this.#pos === 4;
  }
  add(id: number, body: Uint8Array): void {
    const need = this.#pos + RECORD_HEAD + body.length;
    if (need > this.#buf.length) {
      const next = new Uint8Array(Math.max(need, this.#buf.length * 2));
      next.set(this.#buf.subarray(0, this.#pos));
      this.#buf = next;
      this.#view = new DataView(next.buffer);
    }
    this.#view.setUint32(this.#pos, id, true);
    this.#view.setUint16(this.#pos + 4, body.length, true);
    this.#buf.set(body, this.#pos + RECORD_HEAD);
    this.#pos = need;
  }
  /** The frame (a copy), and the batch emptied. */
  take(): Uint8Array {
    this.#view.setUint32(0, this.#pos - 4, true);
    const frame = this.#buf.slice(0, this.#pos);
    this.#pos = 4;
    return frame;
  }
}

/** Calls `each(id, bytes)` for every record of a frame body. */
function records(body: Uint8Array, view: DataView, each: (id: number, bytes: Uint8Array) => void): void {
  const base = body.byteOffset;
  for (let p = 0; p + RECORD_HEAD <= body.length;) {
    const id = view.getUint32(base + p, true), len = view.getUint16(base + p + 4, true);
    each(id, body.subarray(p + RECORD_HEAD, p + RECORD_HEAD + len));
    p += RECORD_HEAD + len;
  }
}

/** One half of the relay: the port it listens on, and how to stop it. */
export interface RelayHalf {
  port: number;
  /** Stops listening, closes its connections and its tick; resolves once its loops ended. */
  close(): Promise<void>;
}

/** The back: listens, takes one front, keeps each client's latest message, sends a frame per client each tick. */
export function serveRelayBack(down: number): RelayHalf {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const frame = new Uint8Array(down).fill(7);
  let conn: Deno.TcpConn | null = null, tick: ReturnType<typeof setInterval> | undefined;
  const done = (async () => {
    conn = await listener.accept();
    conn.setNoDelay(true);
    const out = new Writer(conn);
    const latest = new Map<number, Uint8Array>();
    const batch = new Batch();
    tick = setInterval(() => {
      for (const id of latest.keys()) batch.add(id, frame);
      if (!batch.empty) out.write(batch.take());
    }, TICK_MS);
    await readFrames(conn, (body, view) => records(body, view, (id, bytes) => latest.set(id, bytes.slice())));
  })().catch(() => {}); // the front went away, or close()
  return {
    port: (listener.addr as Deno.NetAddr).port,
    async close() {
      clearInterval(tick);
      listener.close();
      try {
        (conn as Deno.TcpConn | null)?.close();
      } catch {
        // already closed
      }
      await done;
    },
  };
}

/** The front: the core/ws server, each message forwarded to the back, each frame of the back's relayed. */
export async function serveRelayFront(backPort: number): Promise<RelayHalf> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: backPort });
  conn.setNoDelay(true);
  const out = new Writer(conn);
  const batch = new Batch();
  let flushQueued = false;
  const flush = () => {
    flushQueued = false;
    if (!batch.empty) out.write(batch.take());
  };
  const clients: (WsConn | undefined)[] = [];
  let nextId = 0;
  const server = serveWebSocket({
    hostname: "127.0.0.1",
    port: 0,
    sockets: "epoll",
    onConnection: (ws) => {
      const id = nextId++;
      clients[id] = ws;
      ws.onMessage = (data) => {
        batch.add(id, data);
        if (!flushQueued) {
          flushQueued = true;
          queueMicrotask(flush);
        }
      };
      ws.onClose = () => clients[id] = undefined;
    },
  });
  const part: Uint8Array[] = [new Uint8Array(0)];
  const done = readFrames(conn, (body, view) =>
    records(body, view, (id, bytes) => {
      part[0] = bytes;
      clients[id]?.writeParts(part);
    })).catch(() => {}); // the back went away, or close()
  return {
    port: server.addr.port,
    async close() {
      await server.close();
      try {
        conn.close();
      } catch {
        // already closed
      }
      await done;
    },
  };
}
