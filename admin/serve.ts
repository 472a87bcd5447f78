/**
 * Serves the admin API over node:http with the connection limits Deno.serve
 * does not have: a deadline for each request head, an idle timeout between
 * keep-alive requests, a deadline for each request body and a cap on open
 * connections. (Neither Deno.serve nor Deno's node:http `headersTimeout`
 * closes a connection that sends its head slowly or never finishes it; Deno's
 * node:http does hand over the socket at "connection", before the head.)
 */
import { errorText } from "../core/errors.ts";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Buffer } from "node:buffer";
import { getRequestListener, RequestError } from "@hono/node-server";
import { errorBody } from "./errors.ts";
import { answerUpgrade } from "./watch_upgrade.ts";
import { serveTlsFront } from "./tls_front.ts";
import type { NodeUpgrade } from "./watch.ts";

/** Where and how the admin API is served. */
export interface ServeOptions {
  /** Address to bind. */
  hostname: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  /** Time a connection gets to send a whole request head, from connecting or from the previous response (ms). */
  headerTimeoutMs: number;
  /** Time a keep-alive connection may wait for its next request (ms); [30 s]. */
  idleTimeoutMs?: number;
  /** Time a request gets to send its whole body once its head is in (ms); [30 s]. */
  bodyTimeoutMs?: number;
  /** Most connections open at once; more are closed as soon as they arrive. [1000] */
  maxConnections?: number;
  /** How long close() lets requests in flight finish before cutting them off (ms); [5 s]. */
  closeGraceMs?: number;
  /** Told of server errors after it listens (accept failures); [console.error]. */
  onError?: (e: Error) => void;
  /** PEM certificate chain and key: serve HTTPS (and wss:// for the watch socket) through tls_front.ts. */
  tls?: { cert: string; key: string } | null;
  /** Told of a TLS handshake that failed (a client that does not trust the certificate); [ignored]. */
  onTlsError?: (remote: string, e: Error) => void;
}

/** A running admin HTTP server. */
export interface AdminServer {
  /** The address it is bound to. */
  readonly hostname: string;
  /** The port it listens on (the chosen one when asked for 0). */
  readonly port: number;
  /** Connections open now. */
  readonly connections: number;
  /** Connections closed on arrival because `maxConnections` were open. */
  readonly refused: number;
  /** Connections closed for missing a deadline (head, idle or body). */
  readonly timedOut: number;
  /** Stops accepting, lets requests in flight finish (up to `closeGraceMs`), closes every connection. */
  close(): Promise<void>;
}

/**
 * A fetch-style handler, such as a Hono app's `fetch`. WebSocket upgrade
 * requests come with `env.upgrade` (the socket, for the route that takes it over).
 */
export type FetchHandler = (request: Request, env?: { upgrade: NodeUpgrade }) => Response | Promise<Response>;

/** How long a connection closed with request data still arriving keeps taking it in (ms). */
const LINGER_MS = 500;

interface Conn {
  socket: Socket;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** Requests being answered on it (more than one only when a client pipelines). */
  inFlight: number;
}

/**
 * Starts serving `fetch` on `opts.hostname:opts.port`, over HTTPS with `opts.tls`. Rejects with
 * Deno.errors.AddrInUse or Deno.errors.AddrNotAvailable, as Deno.listen
 * would, when the address cannot be bound.
 */
export async function serveAdmin(fetch: FetchHandler, opts: ServeOptions): Promise<AdminServer> {
  if (!opts.tls) return await servePlain(fetch, opts, false);
  // The plain server behind the front sees only the front's connections, each one the front's TLS connection.
  const plain = await servePlain(fetch, { ...opts, hostname: "127.0.0.1", port: 0 }, true);
  let front;
  try {
    front = serveTlsFront({
      hostname: opts.hostname,
      port: opts.port,
      cert: opts.tls.cert,
      key: opts.tls.key,
      target: { hostname: plain.hostname, port: plain.port },
      handshakeTimeoutMs: opts.headerTimeoutMs,
      maxConnections: opts.maxConnections ?? 1000,
      onHandshakeError: opts.onTlsError ?? (() => {}),
    });
  } catch (e) {
    await plain.close();
    throw e;
  }
  return {
    hostname: front.hostname,
    port: front.port,
    get connections() {
      return plain.connections;
    },
    get refused() {
      return plain.refused + front.refused;
    },
    get timedOut() {
      return plain.timedOut + front.timedOut;
    },
    async close() {
      await front.close();
      await plain.close();
    },
  };
}

/** Serves `fetch` in clear; `encrypted` marks every request as come in over TLS (its URL says https). */
function servePlain(fetch: FetchHandler, opts: ServeOptions, encrypted: boolean): Promise<AdminServer> {
  const headerMs = opts.headerTimeoutMs;
  const idleMs = opts.idleTimeoutMs ?? 30_000;
  const bodyMs = opts.bodyTimeoutMs ?? 30_000;
  const max = opts.maxConnections ?? 1000;
  const graceMs = opts.closeGraceMs ?? 5000;
  const onError = opts.onError ?? ((e: Error) => console.error(`admin API server: ${e.message}`));
  const conns = new Map<Socket, Conn>();
  /** Connections handed to a WebSocket (which holds its own copy of the descriptor). */
  const upgraded = new Set<Socket>();
  let upgrades = 0;
  let refused = 0;
  let timedOut = 0;
  let closing = false;
  let closed: Promise<void> | null = null;

  const deadline = (conn: Conn, ms: number, expired: () => boolean = () => true): void => {
    clearTimeout(conn.timer);
    conn.timer = setTimeout(() => {
      conn.timer = undefined;
      if (!expired()) return;
      timedOut++;
      conn.socket.destroy();
    }, ms);
  };

  const server = createServer();
  server.on("connection", (socket: Socket) => {
    if (closing || conns.size >= max) {
      refused++;
      socket.destroy();
      return;
    }
    // Read by the request adapter and by answerUpgrade for the request's scheme.
    if (encrypted) (socket as Socket & { encrypted?: boolean }).encrypted = true;
    const conn: Conn = { socket, timer: undefined, inFlight: 0 };
    conns.set(socket, conn);
    deadline(conn, headerMs);
    lingerOnClose(socket, LINGER_MS);
    socket.once("close", () => {
      clearTimeout(conn.timer);
      conns.delete(socket);
    });
  });
  // Registered before the app's listener, so a request is counted before its handler runs.
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const conn = conns.get(req.socket as Socket);
    if (!conn) return;
    conn.inFlight++;
    if (closing) res.setHeader("Connection", "close");
    closeIfBodyUnread(req, res);
    // Only a body still arriving is cut off; a slow handler with its whole body in is left to finish.
    deadline(conn, bodyMs, () => !req.complete);
    res.once("finish", () => {
      if (--conn.inFlight > 0) return;
      if (closing) {
        conn.socket.end();
        return;
      }
      // No event tells when the next head starts arriving, so one deadline bounds both the wait and the head.
      deadline(conn, Math.min(headerMs, idleMs));
    });
  });
  // A WebSocket upgrade leaves the connection's bookkeeping: its deadlines end, and the watch socket bounds watchers.
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const conn = conns.get(socket);
    if (conn) clearTimeout(conn.timer);
    conns.delete(socket);
    if (closing) return void socket.destroy();
    upgraded.add(socket);
    upgrades++;
    socket.once("close", () => upgraded.delete(socket));
    void answerUpgrade((r, env) => fetch(r, env), req, socket, head).catch((e) => {
      onError(e as Error);
      socket.destroy();
    });
  });
  server.on(
    "request",
    getRequestListener((req) => fetch(req), {
      // Otherwise the adapter swaps the process-wide Request and Response for its own.
      overrideGlobalObjects: false,
      errorHandler: (e) => {
        if (e instanceof RequestError) {
          const message = /missing host/i.test(e.message)
            ? "the request has no Host header; send the name you reach the admin API by"
            : `the request cannot be read: ${e.message}`;
          return errorBody(400, "bad_request", message);
        }
        // A client gone mid-body is no server error; the answer goes nowhere.
        if ((e as { code?: string }).code !== "ECONNRESET") onError(e as Error);
        return errorBody(500, "internal", errorText(e));
      },
    }),
  );

  return new Promise((resolve, reject) => {
    const failed = (e: Error & { code?: string }) => {
      if (e.code === "EADDRINUSE") reject(new Deno.errors.AddrInUse(e.message));
      else if (e.code === "EADDRNOTAVAIL") reject(new Deno.errors.AddrNotAvailable(e.message));
      else reject(e);
    };
    server.once("error", failed);
    server.listen(opts.port, opts.hostname, () => {
      server.off("error", failed);
      server.on("error", onError);
      const addr = server.address();
      if (addr === null || typeof addr === "string") {
        reject(new Error(`admin API server: unexpected listening address ${JSON.stringify(addr)}`));
        return;
      }
      resolve({
        hostname: addr.address,
        port: addr.port,
        get connections() {
          return conns.size;
        },
        get refused() {
          return refused;
        },
        get timedOut() {
          return timedOut;
        },
        close(): Promise<void> {
          closed ??= new Promise<void>((done) => {
            closing = true;
            let poll: ReturnType<typeof setInterval> | undefined;
            const finish = () => {
              clearTimeout(hard);
              clearInterval(poll);
              done();
            };
            const hard = setTimeout(() => {
              for (const socket of conns.keys()) socket.destroy();
              if (upgrades > 0) finish();
            }, graceMs);
            server.close(finish);
            for (const conn of conns.values()) if (conn.inFlight === 0) conn.socket.destroy();
            // Their WebSockets are the app's to close (the watch hub's close()).
            for (const socket of upgraded) socket.destroy();
            // Deno's node:http never reports itself closed once it upgraded a connection: it is, once the others are.
            if (upgrades > 0) poll = setInterval(() => conns.size === 0 && finish(), 20);
          });
          return closed;
        },
      });
    });
  });
}

/**
 * An answer sent before its request's body is all in (413, 415, 401...) ends
 * the connection: the rest of the body is never read, so the connection
 * cannot carry another request, and a client that reused it would have its
 * next request cut off.
 */
function closeIfBodyUnread(req: IncomingMessage, res: ServerResponse): void {
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: Parameters<ServerResponse["writeHead"]>) {
    if (!req.complete) this.setHeader("Connection", "close");
    return writeHead.apply(this, args);
  } as ServerResponse["writeHead"];
}

/**
 * Makes the server's "close after this answer" a lingering close: our side
 * ends at once, but what the client is still sending is taken in for `ms`
 * before the socket goes, because closing a socket with unread data resets
 * the connection, and a reset can reach the client before it reads the answer.
 */
function lingerOnClose(socket: Socket, ms: number): void {
  let lingering = false;
  socket.destroySoon = () => {
    if (lingering) return;
    lingering = true;
    socket.end();
    socket.resume();
    const timer = setTimeout(() => socket.destroy(), ms);
    socket.once("close", () => clearTimeout(timer));
  };
}
