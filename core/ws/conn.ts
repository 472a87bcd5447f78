/**
 * One server-side WebSocket connection after its handshake: a read loop that parses frames out of one growable
 * buffer and delivers messages, the close handshake, and pings for a connection that went quiet. Its outgoing side,
 * the frames queued and their writes, is conn_output.ts.
 *
 * A peer that does not read cannot make the server hold more than a bounded amount for it: only the latest pong is
 * kept (RFC 6455 section 5.5.3 lets an endpoint answer only the most recent ping), reading pauses while the bytes
 * waiting to be written are above a high-water mark or a pong waits behind an unfinished write, and a connection
 * whose writes stay behind like that with no progress for `writeStallMs`, or whose waiting bytes pass `maxBuffered`,
 * is dropped. A close frame is not sent then: it would wait behind the very bytes the peer does not read.
 */
import { errorText } from "../errors.ts";
import type { ByteConn } from "../tls/mod.ts";
import { type Logger, silentLogger } from "../log.ts";
import {
  CloseCode,
  closePayload,
  isSendableCode,
  NEED_MORE,
  Op,
  parseClose,
  WsProtocolError,
  WsReader,
} from "./frame.ts";
import { type OutputHost, WsOutput } from "./conn_output.ts";
import { CLOSE_WAIT_MS, type WsCloseInfo, type WsConnOptions, type WsConnStats, type WsState } from "./conn_options.ts";

/** Bytes a connection closed for a violation still reads (and drops) while waiting for the peer to stop sending. */
const DISCARD_LIMIT = 64 * 1024;

const textEncoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** A WebSocket connection, made by a WsServer once the handshake succeeded. */
export class WsConn {
  /** Called with each message; `data` is a view that stays valid. Set it before the server starts reading. */
  onMessage: (data: Uint8Array, binary: boolean) => void = () => {};
  /** Called once when the TCP connection ended, with the code and reason of the side that closed first. */
  onClose: (code: number, reason: string) => void = () => {};
  /** The peer's address, HOST:PORT. */
  readonly remote: string;
  /** Resolves once the TCP connection ended. */
  readonly closed: Promise<WsCloseInfo>;
  readonly stats: WsConnStats = {
    messagesIn: 0,
    bytesIn: 0,
    messagesOut: 0,
    bytesOut: 0,
    writes: 0,
    pingsIn: 0,
    pongsOut: 0,
    readPauses: 0,
  };

  #conn: ByteConn;
  #reader: WsReader;
  #out: WsOutput;
  #state: WsState = "open";
  #ended = false;
  /** The peer broke the protocol: nothing more is parsed, what arrives is discarded until the end. */
  #failing = false;
  #code: number = CloseCode.abnormal;
  #reason = "";
  /** Set while reading is paused: resumes the read loop. */
  #resume: (() => void) | null = null;
  #idleMs: number;
  #lastHeard = performance.now();
  #pingedAt = -1;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #endTimer: ReturnType<typeof setTimeout> | undefined;
  #log: Logger;
  #resolveClosed!: (info: WsCloseInfo) => void;
  #idleTask = () => this.#checkIdle();

  /** Wraps a connection whose handshake is done; `early` holds bytes that arrived after the request head. */
  constructor(conn: ByteConn, remote: string, opts: WsConnOptions, early: Uint8Array = EMPTY) {
    this.#conn = conn;
    this.remote = remote;
    this.#reader = new WsReader(opts.maxMessage);
    if (early.length > 0) this.#reader.push(early);
    this.#idleMs = opts.idleMs;
    this.#log = (opts.log ?? silentLogger).child(`[ws ${remote}]`);
    const host: OutputHost = {
      stats: this.stats,
      isEnded: () => this.#ended,
      end: (code, reason) => this.#end(code, reason),
      wake: () => this.#wake(),
      debug: (line) => this.#log.debug(line),
    };
    this.#out = new WsOutput(conn, host, opts);
    this.closed = new Promise((r) => this.#resolveClosed = r);
  }

  /** Starts reading and watching for silence; the server calls it after handing the connection out. */
  start(): void {
    if (this.#ended) return;
    this.#lastHeard = performance.now();
    this.#idleTimer = setTimeout(this.#idleTask, this.#idleMs);
    this.#readLoop();
  }

  /** Where the connection is in its life. */
  get state(): WsState {
    return this.#state;
  }

  /** True until a close frame was sent or received. */
  get isOpen(): boolean {
    return this.#state === "open";
  }

  /** Bytes queued or being written that have not reached the socket yet, a waiting pong included. */
  get bufferedAmount(): number {
    return this.#out.bufferedAmount;
  }

  /** True while reading from the peer is paused until writes catch up. */
  get readPaused(): boolean {
    return this.#resume !== null;
  }

  /** Largest message accepted from now on, in bytes; may be changed at any time. */
  get maxMessage(): number {
    return this.#reader.maxMessage;
  }

  set maxMessage(bytes: number) {
    if (!(bytes >= 0)) throw new RangeError(`maxMessage must be a number of bytes, not ${bytes}`);
    this.#reader.maxMessage = bytes;
  }

  /** Sends `bytes` as one binary message; ignored once the connection is closing. */
  send(bytes: Uint8Array): void {
    if (this.#state !== "open") return;
    this.#out.frame(Op.binary, bytes);
    this.#sent(bytes.length);
  }

  /** Sends `parts`, one after the other, as one binary message without joining them first. */
  sendParts(parts: readonly Uint8Array[]): void {
    if (this.#state !== "open") return;
    this.#sent(this.#out.frameParts(Op.binary, parts));
  }

  /**
   * Sends `parts` as one binary message, like `sendParts`, and starts writing at once instead of at the end of the
   * turn: for a caller that batched its messages itself and calls this once per turn.
   */
  writeParts(parts: readonly Uint8Array[]): void {
    if (this.#state !== "open") return;
    this.stats.messagesOut++;
    this.stats.bytesOut += this.#out.frameParts(Op.binary, parts);
    if (this.#checkBacklog()) return;
    this.#out.flushUnlessQueued();
  }

  /** Sends `text` as one text message. */
  sendText(text: string): void {
    if (this.#state !== "open") return;
    const bytes = textEncoder.encode(text);
    this.#out.frame(Op.text, bytes);
    this.#sent(bytes.length);
  }

  /**
   * Sends a close frame after what is queued and ends the TCP connection once the peer answered it, or after
   * CLOSE_WAIT_MS. `reason` is cut to 123 bytes. Messages that arrive meanwhile are dropped. Throws RangeError for
   * a code no endpoint may send (1004-1006, 1015, below 1000 or above 4999).
   */
  close(code: number = CloseCode.normal, reason = ""): void {
    if (this.#state !== "open") return;
    if (!isSendableCode(code)) throw new RangeError(`${code} is not a close code a server may send`);
    this.#startClose(code, reason);
  }

  #sent(bytes: number): void {
    this.stats.messagesOut++;
    this.stats.bytesOut += bytes;
    if (this.#checkBacklog()) return;
    this.#out.schedule();
  }

  /**
   * Returns true when the bytes waiting passed maxBuffered: the connection then stops taking messages and is dropped
   * at the end of the turn (not from inside the caller's send, which should not see onClose run under it).
   */
  #checkBacklog(): boolean {
    const over = this.#out.overLimit();
    if (over === null) return false;
    this.#log.debug(`dropping: ${this.bufferedAmount} bytes waiting to be written`);
    this.#state = "closing";
    this.#code = CloseCode.policy;
    this.#reason = over;
    queueMicrotask(() => this.#end());
    return true;
  }

  /** Resolves when reading may go on, or the connection ended. */
  #paused(): Promise<void> {
    this.stats.readPauses++;
    this.#out.watchStall();
    return new Promise((resolve) => this.#resume = resolve);
  }

  /** Resumes reading once the writes caught up (or the connection ended). */
  #wake(): void {
    const resume = this.#resume;
    if (resume === null || (!this.#ended && this.#out.behind())) return;
    this.#resume = null;
    resume();
  }

  #startClose(code: number, reason: string): void {
    this.#state = "closing";
    this.#code = code;
    this.#reason = reason;
    this.#out.frameLast(Op.close, closePayload(code, reason));
    this.#out.flush();
    this.#endTimer = setTimeout(() => this.#end(), CLOSE_WAIT_MS);
  }

  /** Ends the TCP connection once everything queued (a close frame last) was written. */
  #endAfterWrite(): void {
    this.#out.flush();
    this.#out.writeDone.then(() => this.#end());
  }

  /** Closes for a protocol violation: sends the close frame, stops parsing, and discards input until the end. */
  #fail(code: number, reason: string): void {
    this.#log.debug(`closing with ${code}: ${reason}`);
    this.#failing = true;
    if (this.#state === "open") this.#startClose(code, reason);
    // The close frame and then EOF reach the peer even while it keeps sending.
    this.#out.writeDone.then(() => {
      if (this.#ended) return;
      this.#conn.closeWrite().catch(() => {
        // already shut down
      });
    });
  }

  #end(code?: number, reason?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#state === "open" && code !== undefined) {
      this.#code = code;
      this.#reason = reason ?? "";
    }
    this.#state = "closed";
    clearTimeout(this.#endTimer);
    clearTimeout(this.#idleTimer);
    this.#out.end();
    this.#wake();
    try {
      this.#conn.close();
    } catch {
      // already closed
    }
    const info = { code: this.#code, reason: this.#reason };
    this.#resolveClosed(info);
    try {
      this.onClose(info.code, info.reason);
    } catch (e) {
      this.#log.error(`onClose failed: ${errorText(e, { stack: true })}`);
    }
  }

  async #readLoop(): Promise<void> {
    const r = this.#reader;
    try {
      while (this.#parse()) {
        if (this.#out.behind()) {
          await this.#paused();
          if (this.#ended) return;
        }
        const n = await this.#conn.read(r.space());
        if (n === null) {
          if (this.#state === "open") this.#end(CloseCode.abnormal, "the peer ended the connection without a close");
          else this.#end();
          return;
        }
        this.#lastHeard = performance.now();
        this.stats.bytesIn += n;
        r.commit(n);
      }
      if (this.#failing) {
        // A peer that stops sending gets our close frame and a clean end; one that keeps sending is cut off after
        // DISCARD_LIMIT bytes (closing with unread input resets the connection, which could lose the close frame).
        // The bytes go into the free space without being committed: nothing is kept.
        const scratch = r.space();
        let discarded = 0;
        while (!this.#ended && discarded < DISCARD_LIMIT) {
          const n = await this.#conn.read(scratch);
          if (n === null) break;
          discarded += n;
        }
        this.#endAfterWrite();
      }
    } catch (e) {
      this.#end(CloseCode.abnormal, `read failed: ${errorText(e)}`);
    }
  }

  /** Handles every complete frame buffered; returns false when reading must stop. */
  #parse(): boolean {
    const r = this.#reader;
    for (;;) {
      if (this.#ended || this.#failing) return false;
      let op: number;
      try {
        op = r.next();
      } catch (e) {
        if (!(e instanceof WsProtocolError)) throw e;
        this.#fail(e.code, e.message);
        return false;
      }
      switch (op) {
        case NEED_MORE:
          return true;
        case Op.binary:
        case Op.text:
          if (this.#state !== "open") continue;
          this.stats.messagesIn++;
          try {
            this.onMessage(r.payload, op === Op.binary);
          } catch (e) {
            this.#log.error(`onMessage failed: ${errorText(e, { stack: true })}`);
          }
          continue;
        case Op.ping:
          if (this.#state === "open") this.#out.queuePong(r.payload);
          continue;
        case Op.pong:
          continue;
        case Op.close:
          this.#onCloseFrame(r.payload);
          return false;
      }
    }
  }

  #onCloseFrame(payload: Uint8Array): void {
    let got: WsCloseInfo;
    try {
      got = parseClose(payload);
    } catch (e) {
      const err = e as WsProtocolError;
      this.#fail(err.code, err.message);
      return;
    }
    if (this.#state === "open") {
      // The peer closes first: answer with its code, then end the TCP connection (the server side ends it first).
      this.#state = "closing";
      this.#code = got.code;
      this.#reason = got.reason;
      this.#out.frameLast(Op.close, got.code === CloseCode.noStatus ? EMPTY : closePayload(got.code, ""));
      this.#endTimer = setTimeout(() => this.#end(), CLOSE_WAIT_MS);
    }
    this.#endAfterWrite();
  }

  #checkIdle(): void {
    if (this.#state !== "open") return;
    const now = performance.now();
    const silent = now - this.#lastHeard;
    if (silent >= 2 * this.#idleMs) {
      this.close(CloseCode.goingAway, `no traffic for ${Math.round(silent)} ms`);
      return;
    }
    if (silent >= this.#idleMs) {
      if (this.#pingedAt < this.#lastHeard) {
        this.#pingedAt = now;
        this.#out.frame(Op.ping, EMPTY);
        this.#out.flush();
      }
      this.#idleTimer = setTimeout(this.#idleTask, 2 * this.#idleMs - silent);
    } else {
      this.#idleTimer = setTimeout(this.#idleTask, this.#idleMs - silent);
    }
  }
}
