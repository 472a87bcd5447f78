/**
 * The outgoing side of a WebSocket connection (conn.ts): the frames queued, the one pong kept (RFC 6455 section
 * 5.5.3 lets an endpoint answer only the most recent ping), the write loop that writes everything queued in one socket
 * write, and the watch on writes that stay behind with no progress.
 */
import { errorText } from "../errors.ts";
import type { ByteConn } from "../tls/mod.ts";
import { CloseCode, Op, WsWriter } from "./frame.ts";
import {
  HIGH_WATER_BYTES,
  MAX_BUFFERED,
  WRITE_STALL_MS,
  type WsConnOptions,
  type WsConnStats,
} from "./conn_options.ts";

const EMPTY = new Uint8Array(0);

/** What the outgoing side needs of its connection. */
export interface OutputHost {
  readonly stats: WsConnStats;
  /** Whether the TCP connection ended: no write starts any more. */
  isEnded(): boolean;
  /** Ends the TCP connection: a write failed, or the writes stayed behind with no progress. */
  end(code: number, reason: string): void;
  /** The writes made progress or ended: reading may go on if it waited for them. */
  wake(): void;
  /** Says why the connection is dropped, for the log. */
  debug(line: string): void;
}

/** One connection's outgoing frames and their writes. */
export class WsOutput {
  #conn: ByteConn;
  #host: OutputHost;
  #writer = new WsWriter();
  #writing = false;
  #writeDone: Promise<void> = Promise.resolve();
  #flushQueued = false;
  #inFlight = 0;
  /** The payload of the latest ping not answered yet (in the first `#pongLen` bytes), made at the first ping. */
  #pong: Uint8Array = EMPTY;
  /** -1 when no pong is waiting. */
  #pongLen = -1;
  #highWater: number;
  #maxBuffered: number;
  #writeStallMs: number;
  /** When the current write started or last made progress. */
  #lastWrite = 0;
  #stallTimer: ReturnType<typeof setTimeout> | undefined;
  #flushTask = () => this.flush();
  #stallTask = () => this.#checkStall();

  /** `opts`: the connection's limits on what waits to be written. */
  constructor(
    conn: ByteConn,
    host: OutputHost,
    opts: Pick<WsConnOptions, "highWaterBytes" | "maxBuffered" | "writeStallMs">,
  ) {
    this.#conn = conn;
    this.#host = host;
    this.#highWater = opts.highWaterBytes ?? HIGH_WATER_BYTES;
    this.#maxBuffered = opts.maxBuffered ?? MAX_BUFFERED;
    this.#writeStallMs = opts.writeStallMs ?? WRITE_STALL_MS;
  }

  /** Bytes queued or being written that have not reached the socket yet, a waiting pong included. */
  get bufferedAmount(): number {
    return this.#writer.length + this.#inFlight + (this.#pongLen >= 0 ? 2 + this.#pongLen : 0);
  }

  /** Resolves when the write under way (if any) has ended. */
  get writeDone(): Promise<void> {
    return this.#writeDone;
  }

  /** Queues one final frame of `op` with `payload` (after a waiting pong); returns the bytes added. */
  frame(op: number, payload: Uint8Array): number {
    this.#pongFirst();
    const before = this.#writer.length;
    this.#writer.frame(op, payload);
    return this.#writer.length - before;
  }

  /** Queues `parts`, one after the other, as one final frame of `op` (after a waiting pong); returns the bytes added. */
  frameParts(op: number, parts: readonly Uint8Array[]): number {
    this.#pongFirst();
    const before = this.#writer.length;
    this.#writer.frameParts(op, parts);
    return this.#writer.length - before;
  }

  /** Queues a control frame after everything else, a waiting pong first: a ping, or the close frame. */
  frameLast(op: number, payload: Uint8Array): void {
    this.#framePong();
    this.#writer.frame(op, payload);
  }

  /** Keeps `payload` as the one pong to send, replacing any earlier one not written yet. */
  queuePong(payload: Uint8Array): void {
    this.#host.stats.pingsIn++;
    if (this.#pong.length === 0) this.#pong = new Uint8Array(125);
    this.#pong.set(payload);
    this.#pongLen = payload.length;
    this.schedule();
  }

  /**
   * Watches for stalled writes once the bytes waiting pass the high-water mark. Returns why the connection must be
   * dropped when they passed maxBuffered, else null.
   */
  overLimit(): string | null {
    const waiting = this.bufferedAmount;
    if (waiting <= this.#highWater) return null;
    if (waiting <= this.#maxBuffered) {
      this.watchStall();
      return null;
    }
    return `${waiting} bytes waiting to be written, over the limit of ${this.#maxBuffered}`;
  }

  /**
   * Whether reading must wait for writes: too many bytes waiting, or a pong waiting behind a write that has not
   * finished (reading on would only replace it, at the cost of reading without bound from a peer that does not read).
   */
  behind(): boolean {
    return this.bufferedAmount > this.#highWater || (this.#writing && this.#pongLen >= 0);
  }

  /** Checks in writeStallMs whether the writes are still behind without progress; one watch at a time. */
  watchStall(): void {
    if (this.#stallTimer === undefined) this.#stallTimer = setTimeout(this.#stallTask, this.#writeStallMs);
  }

  /** The connection ended: the stall watch stops and a waiting pong is dropped. */
  end(): void {
    clearTimeout(this.#stallTimer);
    this.#pongLen = -1;
  }

  /** Writes at the end of this turn, so everything sent in it goes out in one socket write. */
  schedule(): void {
    if (!this.#flushQueued && !this.#writing) {
      this.#flushQueued = true;
      queueMicrotask(this.#flushTask);
    }
  }

  /** Starts writing what is queued now, unless a write is under way (it takes what is queued when it ends). */
  flush(): void {
    this.#flushQueued = false;
    if (this.#writing || this.#host.isEnded() || (this.#writer.length === 0 && this.#pongLen < 0)) return;
    if (this.#conn.tryWrite === undefined) {
      this.#writeDone = this.#writeLoop(null, 0);
      return;
    }
    // A connection that can write at once (core/net's): most writes fit, and need no write loop.
    this.#framePong();
    const bytes = this.#writer.take();
    let n: number;
    try {
      n = this.#conn.tryWrite(bytes);
    } catch (e) {
      this.#host.end(CloseCode.abnormal, `write failed: ${errorText(e)}`);
      return;
    }
    if (n < bytes.length) {
      this.#writeDone = this.#writeLoop(bytes, n);
      return;
    }
    this.#host.stats.writes++;
    this.#writer.recycle(bytes);
    this.#host.wake();
  }

  /** Writes at once, unless a flush is already due at the end of this turn. */
  flushUnlessQueued(): void {
    if (!this.#flushQueued) this.flush();
  }

  /** Moves the waiting pong, if any, into the write buffer. */
  #framePong(): void {
    if (this.#pongLen < 0) return;
    this.#writer.frame(Op.pong, this.#pong.subarray(0, this.#pongLen));
    this.#pongLen = -1;
    this.#host.stats.pongsOut++;
  }

  /**
   * Keeps a waiting pong ahead of a message sent after its ping. While a write is in flight it stays aside instead, so
   * that later pings replace it, and goes out with the next write.
   */
  #pongFirst(): void {
    if (!this.#writing) this.#framePong();
  }

  /** Drops the connection when its writes are behind with no progress for writeStallMs; the watch ends once caught up. */
  #checkStall(): void {
    this.#stallTimer = undefined;
    if (this.#host.isEnded() || !this.behind()) return;
    const stuck = this.#writing ? performance.now() - this.#lastWrite : 0;
    if (stuck < this.#writeStallMs) {
      this.#stallTimer = setTimeout(this.#stallTask, this.#writeStallMs - stuck);
      return;
    }
    this.#host.debug(`dropping: no byte written for ${Math.round(stuck)} ms`);
    this.#host.end(
      CloseCode.policy,
      `the peer read none of ${this.bufferedAmount} bytes waiting for ${Math.round(stuck)} ms`,
    );
  }

  /** Writes `started` from `off` (a write begun at once, or null), then what is queued, until nothing is. */
  async #writeLoop(started: Uint8Array | null, off: number): Promise<void> {
    const host = this.#host;
    this.#writing = true;
    try {
      for (;;) {
        let bytes: Uint8Array;
        if (started !== null) {
          bytes = started;
          started = null;
        } else {
          // A pong that came in during the last write goes out now, after what was queued before it.
          this.#framePong();
          if (this.#writer.length === 0) break;
          bytes = this.#writer.take();
          off = 0;
        }
        this.#inFlight = bytes.length - off;
        this.#lastWrite = performance.now();
        host.wake();
        while (off < bytes.length) {
          off += await this.#conn.write(bytes.subarray(off));
          this.#inFlight = bytes.length - off;
          this.#lastWrite = performance.now();
          host.wake();
        }
        host.stats.writes++;
        this.#writer.recycle(bytes);
      }
    } catch (e) {
      host.end(CloseCode.abnormal, `write failed: ${errorText(e)}`);
    } finally {
      this.#writing = false;
      this.#inFlight = 0;
      host.wake();
    }
  }
}
