/**
 * HTTPS for the admin API: a TLS listener on the public address whose connections are relayed, byte for byte, to
 * the plain admin server on a loopback port of this process. The admin server's own code path stays the one served
 * in clear (its deadlines, its limits, and its WebSocket upgrades, which Deno can only take over from a plain TCP
 * socket: Deno.upgradeWebSocket refuses node:https's TLS sockets).
 */
import { formatAddress } from "../core/wire/mod.ts";
import { acceptTls, type ByteConn, serverContext } from "../core/tls/mod.ts";

/** Where the front listens, with what, and where it relays to. */
export interface TlsFrontOptions {
  hostname: string;
  port: number;
  cert: string;
  key: string;
  /** The plain server's loopback port. */
  target: { hostname: string; port: number };
  /** Time a connection gets to complete its TLS handshake (ms). */
  handshakeTimeoutMs: number;
  /** Most connections relayed at once; more are closed as soon as they arrive. */
  maxConnections: number;
  /** Told of a failed handshake (a client that does not trust the certificate, or speaks no TLS). */
  onHandshakeError: (remote: string, e: Error) => void;
}

/** A running TLS front. */
export interface TlsFront {
  readonly hostname: string;
  readonly port: number;
  /** Connections closed on arrival because `maxConnections` were open. */
  readonly refused: number;
  /** Connections closed for not completing the TLS handshake in time. */
  readonly timedOut: number;
  /** Stops listening and ends every relayed connection. */
  close(): Promise<void>;
}

/** Starts the front; throws as Deno.listenTls does when the address cannot be bound. */
export function serveTlsFront(opts: TlsFrontOptions): TlsFront {
  const context = serverContext(opts);
  const listener = Deno.listen({ hostname: opts.hostname, port: opts.port });
  const open = new Set<ByteConn>();
  let refused = 0, timedOut = 0;
  const closeQuietly = (c: ByteConn) => {
    try {
      c.close();
    } catch {
      // already closed
    }
  };

  const relay = async (tcp: Deno.TcpConn): Promise<void> => {
    const remote = formatAddress(tcp.remoteAddr.hostname, tcp.remoteAddr.port);
    // Closing the TCP connection ends a TLS handshake still running over it (core/tls).
    const timer = setTimeout(() => {
      timedOut++;
      closeQuietly(tcp);
    }, opts.handshakeTimeoutMs);
    let conn: ByteConn | null = null;
    let inner: Deno.TcpConn | null = null;
    try {
      try {
        conn = await acceptTls(tcp, context);
      } catch (e) {
        opts.onHandshakeError(remote, e as Error);
        return;
      } finally {
        clearTimeout(timer);
      }
      open.add(conn);
      inner = await Deno.connect(opts.target);
      open.add(inner);
      // The plain server decides when the connection ends (its deadlines, its lingering close): the relay lasts
      // as long as its side does; a client gone cuts the plain side off, which then ends too.
      const target = inner;
      void pump(conn, inner, () => closeQuietly(target));
      await pump(inner, conn, () => {});
    } catch {
      // the plain server is gone (stopping)
    } finally {
      open.delete(tcp);
      closeQuietly(tcp);
      for (const c of [conn, inner]) {
        if (c === null) continue;
        open.delete(c);
        closeQuietly(c);
      }
    }
  };

  const accepting = (async () => {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await listener.accept();
      } catch {
        return; // closed
      }
      if (open.size >= 2 * opts.maxConnections) {
        refused++;
        closeQuietly(conn);
        continue;
      }
      open.add(conn);
      void relay(conn);
    }
  })();

  return {
    hostname: listener.addr.hostname,
    port: listener.addr.port,
    get refused() {
      return refused;
    },
    get timedOut() {
      return timedOut;
    },
    async close() {
      try {
        listener.close();
      } catch {
        // already closed
      }
      await accepting;
      for (const c of open) closeQuietly(c);
    },
  };
}

/** Copies `from` to `to` until `from` ends, then half-closes `to`; `failed` runs if either side fails. */
async function pump(from: ByteConn, to: ByteConn, failed: () => void): Promise<void> {
  const buf = new Uint8Array(16 * 1024);
  try {
    for (let n; (n = await from.read(buf)) !== null;) {
      for (let off = 0; off < n;) off += await to.write(buf.subarray(off, n));
    }
    await to.closeWrite().catch(() => {});
  } catch {
    failed();
  }
}
