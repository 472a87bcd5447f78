import { errorText } from "../errors.ts";
import { FrameError, FrameReader, NONE, type ReaderSizes } from "./frame.ts";
import { messageByKind, type MessageDef } from "./catalog.ts";
import { ChannelClosedError } from "./errors.ts";
import {
  type ChannelOptions,
  HANDSHAKE_MAX_FRAME,
  resolveChannelOptions,
  type ResolvedChannelOptions,
} from "./channel_options.ts";
import { PendingRequests } from "./requests.ts";

export { ChannelClosedError, RemoteError, RequestTimeoutError } from "./errors.ts";
import { ChannelMsg as C, NONCE_BYTES } from "./messages.ts";
import { acceptStep, dialStep, type PeerInfo } from "./handshake.ts";
import { ChannelOutput, type ChannelStats, type RecordsDef } from "./channel_output.ts";
import { heartbeatClock } from "./heartbeats.ts";
import { type Logger, Throttle } from "../log.ts";
import { PROTOCOL_VERSION } from "../version.ts";
import type { ByteWriter } from "../bytes/mod.ts";
import type { ByteConn } from "../tls/mod.ts";

export type { PeerInfo } from "./handshake.ts";
export type { ChannelStats, RecordsDef } from "./channel_output.ts";
export {
  type ChannelOptions,
  type HandlerTable,
  HANDSHAKE_MAX_FRAME,
  type ResolvedChannelOptions,
  type WireTls,
} from "./channel_options.ts";

/** A channel's reader before the handshake: room for the largest handshake frame. */
const HANDSHAKE_READER: ReaderSizes = { buffer: HANDSHAKE_MAX_FRAME, read: 1024 };
/** A channel's writer's first buffer: a handshake frame or two; it doubles as more is written. */
const HANDSHAKE_WRITER_BYTES = 1024;

type State = "handshake" | "open" | "closed";

/**
 * One ordered, long-lived connection to another process: handshake,
 * heartbeats, batched writes, one-way messages and request/reply.
 */
export class Channel {
  /** The peer's identity; known once `ready` resolves. */
  peer: PeerInfo = { role: "tool", pid: 0, address: "?" };
  /** The peer's latest heartbeat payload. */
  lastHeartbeat: unknown = undefined;
  /** performance.now() of the last frame received. */
  lastReceivedAt: number = performance.now();
  readonly stats: ChannelStats = {
    framesIn: 0,
    framesOut: 0,
    bytesIn: 0,
    bytesOut: 0,
    writes: 0,
  };
  /** Resolves once the handshake succeeded; rejects with the reason it failed. */
  readonly ready: Promise<void>;
  /** Resolves with the reason once the channel has closed. */
  readonly closed: Promise<string>;
  /** Called with each heartbeat payload the peer sends. */
  onHeartbeat: ((payload: unknown) => void) | null = null;

  #conn: ByteConn;
  #side: "accept" | "connect";
  #o: ResolvedChannelOptions;
  #state: State = "handshake";
  #reader: FrameReader;
  #out: ChannelOutput;
  #pending = new PendingRequests();
  #nonce: Uint8Array | null = null;
  /** Leaves the heartbeat clock (heartbeats.ts); set while open. */
  #stopBeats: (() => void) | null = null;
  /** When the next heartbeat is due at the latest: how late it comes tells this process's own stalls. */
  #beatDue = 0;
  #handshakeTimer: ReturnType<typeof setTimeout> | undefined;
  #readyResolve!: () => void;
  #readyReject!: (e: Error) => void;
  #closedResolve!: (reason: string) => void;
  #log: Logger;
  /** framesOut at the last heartbeat check (#beat). */
  #framesAtBeat = 0;

  private constructor(
    conn: ByteConn,
    side: "accept" | "connect",
    opts: ChannelOptions,
  ) {
    this.#conn = conn;
    this.#side = side;
    this.#o = resolveChannelOptions(opts);
    const remote = conn.remoteAddr as Deno.NetAddr;
    this.remote = `${remote.hostname}:${remote.port}`;
    this.#log = this.#o.log.child(
      `[${side === "accept" ? "from" : "to"} ${this.remote}]`,
    );
    // Small buffers until the handshake is done, and after it until traffic needs more (docs/protocol.md,
    // "Handshake"): the writer grows with what it is given, the reader as its reads fill the space they had.
    this.#reader = new FrameReader(Math.min(HANDSHAKE_MAX_FRAME, this.#o.maxFrame), undefined, HANDSHAKE_READER);
    this.#out = new ChannelOutput(conn, this, this.#o, HANDSHAKE_WRITER_BYTES);
    this.ready = new Promise<void>((res, rej) => {
      this.#readyResolve = res;
      this.#readyReject = rej;
    });
    this.ready.catch(() => {}); // observed through `closed` as well
    this.closed = new Promise<string>((res) => (this.#closedResolve = res));
    if ("setNoDelay" in conn) (conn as Deno.TcpConn).setNoDelay(true);
  }

  /** The peer's socket address as this side sees it. */
  readonly remote: string;

  /** Wraps an accepted connection: sends the challenge and awaits the peer's hello. */
  static accept(conn: ByteConn, opts: ChannelOptions): Channel {
    const ch = new Channel(conn, "accept", opts);
    ch.#nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
    ch.#startHandshake();
    ch.#push([C.challenge.kind, 0, {
      role: ch.#o.role,
      version: PROTOCOL_VERSION,
      nonce: ch.#nonce,
    }]);
    ch.flush();
    return ch;
  }

  /** Wraps a connection this side opened: answers the challenge with hello. */
  static connect(conn: ByteConn, opts: ChannelOptions): Channel {
    const ch = new Channel(conn, "connect", opts);
    ch.#nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
    ch.#startHandshake();
    return ch;
  }

  /** Bytes written by this side that have not reached the socket yet. */
  get buffered(): number {
    return this.#out.buffered;
  }

  /** True once the handshake succeeded and until the channel closes. */
  get isOpen(): boolean {
    return this.#state === "open";
  }

  /** Sends a one-way message. Dropped with a debug line when the channel is closed. */
  send<A extends unknown[]>(def: MessageDef<A, unknown>, ...args: A): void {
    if (!this.#sendable(def.name)) return;
    this.#checkOut(def, args);
    this.#push([def.kind, 0, ...args]);
  }

  /**
   * Sends a one-way message encoded earlier (`encodeMessage`), in order with what else is sent. Dropped with a debug
   * line when the channel is not open.
   */
  sendEncoded(name: string, body: Uint8Array): void {
    if (!this.#sendable(name)) return;
    this.#out.pushBody(body);
  }

  /** Whether a one-way message may go out now; one that may not is dropped with a debug line. */
  #sendable(name: string): boolean {
    if (this.#state === "open") return true;
    this.#log.debug(`dropped ${name}: channel ${this.#state}`);
    return false;
  }

  /** Sends a request and resolves with the peer's reply, within the default timeout. */
  request<A extends unknown[], R>(
    def: MessageDef<A, R>,
    ...args: A
  ): Promise<R> {
    return this.requestWithin(this.#o.requestTimeoutMs, def, ...args);
  }

  /** Sends a request that rejects with RequestTimeoutError after `timeoutMs`. */
  requestWithin<A extends unknown[], R>(
    timeoutMs: number,
    def: MessageDef<A, R>,
    ...args: A
  ): Promise<R> {
    if (this.#state !== "open") {
      return Promise.reject(
        new ChannelClosedError(
          `${def.name}: channel to ${this.#peerName()} is ${this.#state}`,
        ),
      );
    }
    try {
      this.#checkOut(def, args);
    } catch (e) {
      return Promise.reject(e);
    }
    const { id, reply } = this.#pending.open<R>(def.name, this.#peerName(), timeoutMs);
    this.#push([def.kind, id, ...args]);
    return reply;
  }

  /**
   * Starts one record of the records message `def` with `head` and returns the writer to append it to, at once (the
   * writer is the channel's: write the record before anything else is sent). Records appended in one turn (one tick)
   * with the same def and head go out as one message, in order with the channel's other messages: any other message
   * closes the batch first. Returns null when the channel is not open.
   */
  record(def: RecordsDef, head: number): ByteWriter | null {
    return this.#out.record(def, head);
  }

  /** Writes everything buffered now, without waiting for the end of the tick. */
  flush(): void {
    this.#out.flush();
  }

  /** Closes the channel, telling the peer why when it can still hear. */
  close(reason: string, tellPeer = true): void {
    if (this.#state === "closed") return;
    const wasOpen = this.#state === "open";
    this.#state = "closed";
    this.#stopBeats?.();
    this.#stopBeats = null;
    clearTimeout(this.#handshakeTimer);
    this.#pending.failAll(this.#peerName(), reason);
    this.#readyReject(new ChannelClosedError(reason));
    if (wasOpen) this.#log.info(`closed: ${reason}`);
    const finish = async () => {
      try {
        if (tellPeer) this.#out.pushLast([C.bye.kind, 0, reason.slice(0, 1000)]);
        this.flush();
        await Promise.race([
          this.#out.writeDone,
          new Promise((r) => setTimeout(r, 500)),
        ]);
      } catch {
        // The peer may already be gone; the reason is logged on this side.
      }
      try {
        this.#conn.close();
      } catch {
        // Already closed by the read loop.
      }
      this.#closedResolve(reason);
    };
    finish();
  }

  /**
   * Drops the peer for breaking the protocol or sending nonsense: logs the
   * reason naming the peer, tells the peer, and closes.
   */
  drop(reason: string): void {
    if (this.#state === "closed") return;
    this.#violation(reason);
  }

  #checkOut(def: MessageDef, args: unknown[]): void {
    if (!this.#o.checkOutgoing) return;
    const bad = def.check(args);
    if (bad) throw new Error(`not sending ${def.name} to ${this.#peerName()}: ${bad}`);
  }

  #isClosed(): boolean {
    return this.#state === "closed";
  }

  #peerName(): string {
    return this.#state === "handshake" ? this.remote : `${this.peer.role} pid ${this.peer.pid} (${this.peer.address})`;
  }

  #push(msg: unknown[]): void {
    this.#out.push(msg);
  }

  #startHandshake(): void {
    this.#handshakeTimer = setTimeout(
      () => this.#violation(`no handshake within ${this.#o.handshakeTimeoutMs} ms`),
      this.#o.handshakeTimeoutMs,
    );
    this.#readLoop();
  }

  #open(peer: PeerInfo): void {
    clearTimeout(this.#handshakeTimer);
    this.peer = peer;
    this.#state = "open";
    this.#reader.maxFrame = this.#o.maxFrame;
    this.#log = this.#o.log.child(
      `[${peer.role} pid ${peer.pid} ${peer.address || this.remote}]`,
    );
    this.#beatDue = performance.now() + this.#o.heartbeatMs;
    this.#stopBeats = heartbeatClock.join(this.#o.heartbeatMs, () => this.#beat());
    this.#readyResolve();
  }

  #beat(): void {
    const now = performance.now();
    // This process's own stall (a long GC pause, SIGSTOP, a paused VM) is no silence of the peer's: what the peer sent
    // meanwhile still waits to be read. A beat that comes that late judges nothing; the next one does.
    const late = now - this.#beatDue;
    this.#beatDue = now + this.#o.heartbeatMs;
    const silent = now - this.lastReceivedAt;
    if (silent > this.#o.deadAfterMs && late < this.#o.deadAfterMs / 2) {
      this.close(`no traffic for ${Math.round(silent)} ms (missed heartbeats)`);
      return;
    }
    // Any frame tells the peer this side lives: a channel that sent something since the last beat, and whose beats
    // carry nothing, skips this one (a beat of its own would be a write, and a wake-up of the peer, for nothing).
    const sent = this.stats.framesOut;
    if (this.#o.heartbeatPayload === null && sent !== this.#framesAtBeat) {
      this.#framesAtBeat = sent;
      return;
    }
    this.#push([
      C.heartbeat.kind,
      0,
      this.#o.heartbeatPayload ? this.#o.heartbeatPayload() : null,
    ]);
    this.#framesAtBeat = this.stats.framesOut;
  }

  async #readLoop(): Promise<void> {
    const reader = this.#reader;
    try {
      while (this.#state !== "closed") {
        const space = reader.space();
        const n = await this.#conn.read(space);
        if (n === null) {
          this.close("peer closed the connection", false);
          return;
        }
        this.lastReceivedAt = performance.now();
        this.stats.bytesIn += n;
        reader.commit(n);
        if (this.#state === "open") reader.adapt(n, space.length);
        let frame: unknown;
        while (!this.#isClosed() && (frame = reader.next()) !== NONE) {
          this.stats.framesIn++;
          if (this.#state === "handshake") await this.#onHandshake(frame);
          else this.#onMessage(frame);
        }
      }
    } catch (e) {
      if (this.#state === "closed") return;
      if (e instanceof FrameError) {
        this.#log.warn(`disconnecting: ${e.message}`);
        this.close(e.message);
      } else {
        this.close(`read failed: ${errorText(e)}`, false);
      }
    }
  }

  /** Drops the peer for breaking the protocol, with the reason logged here and sent there. */
  #violation(reason: string): void {
    this.#warnOnce(`disconnecting: ${reason}`);
    this.close(reason);
  }

  /**
   * Logs a warning about this peer, at most once per interval for the same
   * kind of offence from the same host: strangers must not flood the log.
   */
  #warnOnce(line: string): void {
    const held = offences.take(`${this.remote.replace(/:\d+$/, "")} ${line.replace(/\d+/g, "N").slice(0, 60)}`);
    if (held !== null) this.#log.warn(line + Throttle.note(held));
  }

  async #onHandshake(frame: unknown): Promise<void> {
    const msg = asMessage(frame);
    if (typeof msg === "string") return this.#violation(`bad handshake: ${msg}`);
    const [kind] = msg;
    const args = msg.slice(2);
    const step = this.#side === "connect"
      ? await dialStep(kind, args, this.#o, this.#nonce!, this.remote)
      : await acceptStep(kind, args, this.#o, this.#nonce!, this.remote);
    if ("violation" in step) return this.#violation(step.violation);
    if ("refuse" in step) return this.#refuse(step.refuse);
    if ("refused" in step) {
      this.#log.warn(`refused by peer: ${step.refused}`);
      return this.close(`refused by peer: ${step.refused}`, false);
    }
    // The secret was checked while other frames may have closed the channel.
    if (this.#state !== "handshake") return;
    if (step.reply) this.#push(step.reply);
    if (step.open) this.#open(step.open);
  }

  #failed(name: string, what: "handler" | "request", e: unknown): void {
    const held = failures.take(`${what} ${name}`);
    if (held === null) return;
    const line = `${name} ${what} failed: ${errorText(e)}${Throttle.note(held)}`;
    if (what === "handler") this.#log.error(line);
    else this.#log.warn(line);
  }

  #refuse(reason: string): void {
    this.#warnOnce(`refusing peer: ${reason}`);
    this.#out.pushLast([C.refuse.kind, 0, reason]);
    this.close(reason, false);
  }

  #onMessage(frame: unknown): void {
    const msg = asMessage(frame);
    if (typeof msg === "string") return this.#violation(msg);
    const kind = msg[0];
    const reqId = msg[1];
    switch (kind) {
      case C.heartbeat.kind:
        this.lastHeartbeat = msg[2];
        this.onHeartbeat?.(msg[2]);
        return;
      case C.reply.kind:
      case C.errorReply.kind: {
        if (!this.#pending.settle(reqId, kind === C.errorReply.kind, msg[2], this.#peerName())) {
          this.#log.debug(`reply to unknown or expired request ${reqId}`);
        }
        return;
      }
      case C.bye.kind:
        this.#log.info(`peer is closing: ${String(msg[2])}`);
        return this.close(`peer closed: ${String(msg[2])}`, false);
      case C.refuse.kind:
        // The dialler refuses after this side's welcome when this side did not prove the secret to it.
        this.#log.warn(`refused by peer: ${String(msg[2]).slice(0, 1000)}`);
        return this.close(`refused by peer: ${String(msg[2]).slice(0, 1000)}`, false);
      case C.ping.kind:
        if (msg.length !== 2) return this.#violation("ping takes no arguments");
        if (reqId !== 0) this.#push([C.reply.kind, reqId, null]);
        return;
    }
    const def = messageByKind(kind);
    if (!def) return this.#violation(`unknown message kind ${kind}`);
    const handler = this.#o.handlers.get(kind) as ((ch: Channel, ...args: unknown[]) => unknown) | undefined;
    if (!handler || !def.from.includes(this.peer.role)) {
      return this.#violation(
        `unexpected message ${def.name} (kind ${kind}) from a ${this.peer.role}`,
      );
    }
    const args = msg.length > 2 ? msg.slice(2) : [];
    const bad = def.check(args);
    // A member that reports nonsense is broken or hostile: nothing it says next can be trusted either.
    if (bad) return this.#violation(`bad ${def.name}: ${bad}`);
    if (reqId === 0) {
      try {
        const r = handler(this, ...args);
        if (r instanceof Promise) {
          r.catch((e) => this.#failed(def.name, "handler", e));
        }
      } catch (e) {
        this.#failed(def.name, "handler", e);
      }
      return;
    }
    const fail = (e: unknown) => {
      this.#failed(def.name, "request", e);
      if (this.#state === "open") {
        this.#push([C.errorReply.kind, reqId, errorText(e).slice(0, 4000)]);
      }
    };
    const ok = (v: unknown) => {
      if (this.#state === "open") {
        this.#push([C.reply.kind, reqId, v === undefined ? null : v]);
      }
    };
    try {
      const r = handler(this, ...args);
      if (r instanceof Promise) r.then(ok, fail);
      else ok(r);
    } catch (e) {
      fail(e);
    }
  }
}

/**
 * Failures of handlers are logged at most once per message kind and side per
 * interval, with a count: a peer repeating a bad request must not flood the
 * log (the requester hears each failure in its error reply).
 */
const failures = new Throttle(10_000);

/** Protocol violations and refusals, logged at most once per host and kind of offence per interval. */
const offences = new Throttle(10_000);

/** Checks the outer shape `[kind, reqId, ...]`; returns the array or why it is not one. */
function asMessage(frame: unknown): [number, number, ...unknown[]] | string {
  if (!Array.isArray(frame) || frame.length < 2) {
    return "frame is not a [kind, reqId, ...args] array";
  }
  const [kind, reqId] = frame;
  if (typeof kind !== "number" || !Number.isInteger(kind)) {
    return `message kind is not an integer: ${String(kind)}`;
  }
  if (typeof reqId !== "number" || !Number.isInteger(reqId) || reqId < 0) {
    return `request id is not a non-negative integer: ${String(reqId)}`;
  }
  return frame as [number, number, ...unknown[]];
}
