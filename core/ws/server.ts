/**
 * A WebSocket server over raw TCP: reads each request head into a bounded buffer within a deadline, upgrades what is
 * a valid RFC 6455 handshake, answers everything else with one short response, and caps open and half-open
 * connections, so a slow or oversized request costs a bounded amount of memory and time.
 */
import { errorText } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import { formatAddress } from "../wire/mod.ts";
import { WsConn } from "./conn.ts";
import { HIGH_WATER_BYTES, MAX_BUFFERED, WRITE_STALL_MS } from "./conn_options.ts";
import type { SecureContext } from "node:tls";
import { acceptTls, type ByteConn, serverContext, type TlsKeyPair } from "../tls/mod.ts";
import { listenTcp, type SocketKind, type TcpConnection, type TcpListener } from "../net/mod.ts";
import {
  acceptKey,
  findHeadEnd,
  judgeHead,
  MAX_HEAD,
  refusal,
  type RequestHead,
  switchingProtocols,
} from "./http_head.ts";

/** How a WsServer listens and what it tolerates; every limit has a default. */
export interface WsServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** Deno's sockets, or epoll ones through the C library where they can run (core/net; default "deno"). */
  sockets?: SocketKind;
  /** PEM certificate chain and key: serve wss:// (TLS) on the same code path; the handshake counts as the head's time. */
  tls?: TlsKeyPair | null;
  /** Called with each upgraded connection; set its callbacks here, reading starts when this returns. */
  onConnection: (conn: WsConn, head: RequestHead) => void;
  /** A connection that has not sent a complete request head by then is closed (default 10,000). */
  headerTimeoutMs?: number;
  /** Connections open at once, handshaking or upgraded (default 10,000); more are closed at once. */
  maxConnections?: number;
  /** Connections still sending their request head (default 1,000); more are closed at once. */
  maxPending?: number;
  /** Each new connection's message limit in bytes until changed (default 64 KiB). */
  maxMessage?: number;
  /** A connection silent this long is pinged, and closed when silent twice as long (default 30,000). */
  idleMs?: number;
  /**
   * Bytes waiting to be written to a connection above which the server stops reading from it until they drain
   * (default 1 MiB). A pong waiting behind an unfinished write pauses reading as well.
   */
  highWaterBytes?: number;
  /** Bytes waiting to be written to a connection beyond which it is dropped, reported as 1008 (default 16 MiB). */
  maxBuffered?: number;
  /**
   * A connection whose writes are behind (more than highWaterBytes waiting, or a pong waiting behind a write) and made
   * no progress for this long is dropped, reported as 1008 (default 10,000).
   */
  writeStallMs?: number;
  /** Body of the 426 answer to a request that is no WebSocket upgrade. */
  notUpgradeText?: string;
  log?: Logger;
}

/** Counters of a server's life. */
export interface WsServerStats {
  accepted: number;
  upgraded: number;
  /** Closed at accept because a cap was reached. */
  refused: number;
  /** Closed for not completing the request head in time. */
  timedOut: number;
  /** Answered with a 4xx status. */
  rejected: number;
}

/** How long an error response waits for the client to finish sending before the connection is closed. */
const LINGER_MS = 1000;

/** A listening WebSocket server; made by serveWebSocket. */
export class WsServer {
  /** The address it listens on. */
  readonly addr: Deno.NetAddr;
  readonly stats: WsServerStats = { accepted: 0, upgraded: 0, refused: 0, timedOut: 0, rejected: 0 };
  #listener: TcpListener;
  #tls: SecureContext | null;
  #o: Required<Omit<WsServerOptions, "hostname" | "port" | "tls" | "sockets">>;
  #pending = new Set<TcpConnection>();
  #open = new Set<WsConn>();
  #tasks = new Set<Promise<void>>();
  #closing = false;
  #acceptDone: Promise<void>;
  #refusedSinceWarning = 0;
  #warnedAt = -Infinity;

  constructor(opts: WsServerOptions) {
    this.#o = {
      onConnection: opts.onConnection,
      headerTimeoutMs: opts.headerTimeoutMs ?? 10_000,
      maxConnections: opts.maxConnections ?? 10_000,
      maxPending: opts.maxPending ?? 1_000,
      maxMessage: opts.maxMessage ?? 64 * 1024,
      idleMs: opts.idleMs ?? 30_000,
      highWaterBytes: opts.highWaterBytes ?? HIGH_WATER_BYTES,
      maxBuffered: opts.maxBuffered ?? MAX_BUFFERED,
      writeStallMs: opts.writeStallMs ?? WRITE_STALL_MS,
      notUpgradeText: opts.notUpgradeText ?? "this port speaks WebSocket only\n",
      log: opts.log ?? silentLogger,
    };
    this.#tls = opts.tls ? serverContext(opts.tls) : null;
    this.#listener = listenTcp(opts.hostname, opts.port, opts.sockets ?? "deno");
    this.addr = this.#listener.addr;
    this.#acceptDone = this.#acceptLoop();
  }

  /** What its sockets are: epoll ones, or Deno's (where epoll was asked for and cannot run, or was not asked for). */
  get sockets(): SocketKind {
    return this.#listener.kind;
  }

  /** The port it listens on. */
  get port(): number {
    return this.addr.port;
  }

  /** Connections open now, handshaking or upgraded. */
  get connections(): number {
    return this.#pending.size + this.#open.size;
  }

  /** Connections still in their request head. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Stops listening, drops handshaking connections and closes open ones with 1001; resolves once all ended. */
  async close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      try {
        this.#listener.close();
      } catch {
        // already closed
      }
      for (const c of this.#pending) closeQuietly(c);
      for (const ws of this.#open) ws.close(1001, "server shutting down");
    }
    await this.#acceptDone;
    await Promise.all([...this.#tasks, ...[...this.#open].map((ws) => ws.closed)]);
    await this.#listener.finish();
  }

  async #acceptLoop(): Promise<void> {
    for (;;) {
      let conn: TcpConnection;
      try {
        conn = await this.#listener.accept();
      } catch (e) {
        if (this.#closing || e instanceof Deno.errors.BadResource) return;
        // Out of file descriptors or similar: wait rather than spin.
        this.#o.log.warn(`accept failed: ${errorText(e)}`);
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      this.stats.accepted++;
      if (this.#closing) {
        closeQuietly(conn);
        continue;
      }
      if (this.connections >= this.#o.maxConnections || this.#pending.size >= this.#o.maxPending) {
        closeQuietly(conn);
        this.#refused();
        continue;
      }
      const task = this.#handshake(conn);
      this.#tasks.add(task);
      task.finally(() => this.#tasks.delete(task));
    }
  }

  /** Counts a connection closed at accept; warns at most every 10 s, naming the cap. */
  #refused(): void {
    this.stats.refused++;
    this.#refusedSinceWarning++;
    const now = performance.now();
    if (now - this.#warnedAt < 10_000) return;
    this.#o.log.warn(
      `closed ${this.#refusedSinceWarning} new connection(s) at once: ${this.connections} open ` +
        `(limit ${this.#o.maxConnections}), ${this.#pending.size} sending their request head (limit ${this.#o.maxPending})`,
    );
    this.#warnedAt = now;
    this.#refusedSinceWarning = 0;
  }

  async #handshake(tcp: TcpConnection): Promise<void> {
    this.#pending.add(tcp);
    tcp.setNoDelay(true);
    let expired = false, answered = false;
    let conn: ByteConn = tcp;
    // Closing the TCP connection ends a TLS one over it too, in its handshake or not (core/tls).
    const timer = setTimeout(() => {
      expired = true;
      if (!answered) this.stats.timedOut++;
      closeQuietly(tcp);
    }, this.#o.headerTimeoutMs);
    try {
      if (this.#tls) conn = await acceptTls(tcp, this.#tls);
      let buf = new Uint8Array(1024);
      let len = 0;
      let end = -1;
      while (end < 0) {
        if (len === buf.length) {
          if (len >= MAX_HEAD) {
            answered = true;
            await this.#refuse(conn, buf, 431, `request head larger than ${MAX_HEAD} bytes\n`);
            return;
          }
          const grown = new Uint8Array(Math.min(2 * len, MAX_HEAD));
          grown.set(buf);
          buf = grown;
        }
        const n = await conn.read(buf.subarray(len));
        if (n === null) return;
        const from = len;
        len += n;
        end = findHeadEnd(buf, from, len);
      }
      const verdict = judgeHead(buf.subarray(0, end));
      if (verdict.kind === "refuse") {
        answered = true;
        const body = verdict.status === 426 && !verdict.extraHeaders ? this.#o.notUpgradeText : `${verdict.reason}\n`;
        const isHead = String.fromCharCode(...buf.subarray(0, 5)) === "HEAD ";
        await this.#refuse(conn, buf, verdict.status, body, verdict.extraHeaders, !isHead);
        return;
      }
      await writeAll(conn, switchingProtocols(await acceptKey(verdict.key)));
      if (this.#closing || expired) return;
      clearTimeout(timer);
      this.#pending.delete(tcp);
      const a = tcp.remoteAddr;
      const ws = new WsConn(conn, formatAddress(a.hostname, a.port), {
        maxMessage: this.#o.maxMessage,
        idleMs: this.#o.idleMs,
        highWaterBytes: this.#o.highWaterBytes,
        maxBuffered: this.#o.maxBuffered,
        writeStallMs: this.#o.writeStallMs,
        log: this.#o.log,
      }, buf.subarray(end, len));
      this.#open.add(ws);
      ws.closed.then(() => this.#open.delete(ws));
      this.stats.upgraded++;
      try {
        this.#o.onConnection(ws, verdict.head);
      } catch (e) {
        this.#o.log.error(`onConnection failed: ${errorText(e, { stack: true })}`);
        ws.close(1011, "server error");
      }
      ws.start();
    } catch {
      // Timed out (the timer closed the connection) or the peer went away; either way it is over.
      closeQuietly(conn);
    } finally {
      clearTimeout(timer);
      if (this.#pending.delete(tcp)) {
        closeQuietly(conn);
        closeQuietly(tcp);
      }
    }
  }

  /**
   * Answers with `status`, then waits (boundedly) for the client to stop sending before closing: closing with unread
   * input would reset the connection and could lose the answer.
   */
  async #refuse(
    conn: ByteConn,
    scratch: Uint8Array,
    status: number,
    body: string,
    extraHeaders = "",
    withBody = true,
  ): Promise<void> {
    this.stats.rejected++;
    await writeAll(conn, refusal(status, body, extraHeaders, withBody));
    await conn.closeWrite();
    const linger = setTimeout(() => closeQuietly(conn), LINGER_MS);
    try {
      while ((await conn.read(scratch)) !== null) { /* discard */ }
    } finally {
      clearTimeout(linger);
    }
  }
}

/** Starts a WebSocket server on `opts.hostname:opts.port`. */
export function serveWebSocket(opts: WsServerOptions): WsServer {
  return new WsServer(opts);
}

async function writeAll(conn: ByteConn, bytes: Uint8Array): Promise<void> {
  let off = 0;
  while (off < bytes.length) off += await conn.write(bytes.subarray(off));
}

function closeQuietly(conn: ByteConn): void {
  try {
    conn.close();
  } catch {
    // already closed
  }
}
