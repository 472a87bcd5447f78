/**
 * HTTPS for the admin API: a TLS listener on the public address whose connections are relayed, byte for byte, to
 * the plain admin server on a loopback port of this process. The admin server's own code path stays the one served
 * in clear (its deadlines, its limits, and its WebSocket upgrades, which Deno can only take over from a plain TCP
 * socket: Deno.upgradeWebSocket refuses node:https's TLS sockets).
 */
import { formatAddress } from "../core/wire/address.ts";

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
  const listener = Deno.listenTls({ hostname: opts.hostname, port: opts.port, cert: opts.cert, key: opts.key });
  const open = new Set<Deno.Conn>();
  let refused = 0, timedOut = 0;
  const closeQuietly = (c: Deno.Conn) => {
    try {
      c.close();
    } catch {
      // already closed
    }
  };

  const relay = async (conn: Deno.TlsConn): Promise<void> => {
    const remote = formatAddress(conn.remoteAddr.hostname, conn.remoteAddr.port);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let inner: Deno.TcpConn | null = null;
    try {
      await Promise.race([
        conn.handshake(),
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            timedOut++;
            reject(new Error(`no TLS handshake within ${opts.handshakeTimeoutMs} ms`));
          }, opts.handshakeTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
      inner = await Deno.connect(opts.target);
      open.add(inner);
      // The plain server decides when the connection ends (its deadlines, its lingering close): the relay lasts
      // as long as its side does; a client gone cuts the plain side off, which then ends too.
      const target = inner;
      void conn.readable.pipeTo(target.writable).catch(() => closeQuietly(target));
      await inner.readable.pipeTo(conn.writable).catch(() => {});
    } catch (e) {
      if (inner === null) opts.onHandshakeError(remote, e as Error);
    } finally {
      clearTimeout(timer);
      open.delete(conn);
      closeQuietly(conn);
      if (inner) {
        open.delete(inner);
        closeQuietly(inner);
      }
    }
  };

  const accepting = (async () => {
    for (;;) {
      let conn: Deno.TlsConn;
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
