/**
 * The server side of TLS on a plain TCP connection (Deno's or an epoll one, core/net): node:tls runs the handshake
 * over it. Deno.listenTls is not used: closing a Deno.TlsConn whose handshake has not finished waits for that
 * handshake, so a peer that connects and sends nothing would keep its socket as long as it likes. Here the socket is
 * the plain one, which closes at once, so every deadline the servers set also holds during the handshake.
 */
import { createSecureContext, type SecureContext, TLSSocket } from "node:tls";
import { Duplex } from "node:stream";
import { Buffer } from "node:buffer";
import { type ByteConn, NodeTlsConn } from "./conn.ts";

/** A certificate chain and its key, in PEM. */
export interface TlsKeyPair {
  cert: string;
  key: string;
}

/** The node:tls context of `pair`, made once per server. */
export function serverContext(pair: TlsKeyPair): SecureContext {
  return createSecureContext({ cert: pair.cert, key: pair.key });
}

/** Bytes asked of the socket at a time. */
const READ_SIZE = 16 * 1024;

/** `conn` as a node stream, for node:tls to run over; destroying it closes `conn`. */
function duplexOf(conn: ByteConn): Duplex {
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    try {
      conn.close();
    } catch {
      // already closed
    }
  };
  return new Duplex({
    read() {
      const buf = new Uint8Array(READ_SIZE);
      conn.read(buf).then(
        (n) => this.push(n === null ? null : Buffer.from(buf.buffer, 0, n)),
        (e) => this.destroy(e as Error),
      );
    },
    write(chunk: Buffer, _enc, done) {
      (async () => {
        let off = 0;
        while (off < chunk.length) off += await conn.write(chunk.subarray(off));
      })().then(() => done(), (e) => done(e as Error));
    },
    final(done) {
      conn.closeWrite().then(() => done(), () => done());
    },
    destroy(e, done) {
      close();
      done(e);
    },
  });
}

/**
 * Runs the server side of a TLS handshake on `conn`; resolves with the decrypted connection, or rejects with why
 * the handshake failed. Closing `conn` meanwhile (a deadline) fails it at once.
 */
export function acceptTls(conn: ByteConn, context: SecureContext): Promise<NodeTlsConn> {
  const socket = new TLSSocket(duplexOf(conn) as unknown as import("node:net").Socket, {
    isServer: true,
    secureContext: context,
  });
  const remote = conn.remoteAddr as Deno.NetAddr;
  return new Promise((resolve, reject) => {
    const failed = (e: Error) => {
      socket.destroy();
      reject(e);
    };
    socket.once("error", failed);
    socket.once("close", () => reject(new Error("the connection closed during the TLS handshake")));
    socket.once("secure", () => {
      socket.off("error", failed);
      resolve(new NodeTlsConn(socket, remote));
    });
  });
}
