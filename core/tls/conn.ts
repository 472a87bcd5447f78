/**
 * A TLS connection accepted by node:tls, seen through the part of Deno.Conn that the WebSocket server, the channel
 * and the admin front use: read into a buffer, write, half-close, close, and the peer's address.
 */
import type { TLSSocket } from "node:tls";
import { Buffer } from "node:buffer";

/** What the servers here need of a connection; Deno.Conn has it, and so does NodeTlsConn. */
export interface ByteConn {
  readonly remoteAddr: Deno.Addr;
  /** Reads into `p`; the number of bytes, or null at the end of the stream. */
  read(p: Uint8Array): Promise<number | null>;
  /** Writes some of `p` (here: all of it); the number of bytes written. */
  write(p: Uint8Array): Promise<number>;
  /**
   * Where the connection can (core/net's): writes what fits of `p` at once, without waiting; the number of bytes
   * written, 0 when there is no room. Throws when the connection failed or is closed.
   */
  tryWrite?(p: Uint8Array): number;
  /** Ends this side's stream; the peer reads EOF. */
  closeWrite(): Promise<void>;
  /** Closes the connection at once; throws Deno.errors.BadResource when it already was. */
  close(): void;
}

/** Received bytes beyond which the socket is paused until `read` takes them. */
const HIGH_WATER = 64 * 1024;

/** A node:tls socket whose handshake is done, read and written like a Deno.Conn. */
export class NodeTlsConn implements ByteConn {
  readonly remoteAddr: Deno.NetAddr;
  #socket: TLSSocket;
  #chunks: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error: Error | null = null;
  #closed = false;
  #wake: (() => void) | null = null;

  /** Wraps `socket` (its handshake done), which runs over a connection from `remoteAddr`. */
  constructor(socket: TLSSocket, remoteAddr: Deno.NetAddr) {
    this.#socket = socket;
    this.remoteAddr = remoteAddr;
    socket.on("data", (chunk: Buffer) => {
      this.#chunks.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.#queued += chunk.byteLength;
      if (this.#queued >= HIGH_WATER) socket.pause();
      this.#notify();
    });
    socket.on("end", () => {
      this.#ended = true;
      this.#notify();
    });
    socket.on("error", (e: Error) => {
      this.#error = e;
      this.#notify();
    });
    socket.on("close", () => {
      this.#ended = true;
      this.#notify();
    });
  }

  #notify(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async read(p: Uint8Array): Promise<number | null> {
    while (this.#chunks.length === 0) {
      if (this.#closed) throw new Deno.errors.BadResource("the connection is closed");
      if (this.#error) throw this.#error;
      if (this.#ended) return null;
      await new Promise<void>((r) => (this.#wake = r));
    }
    const head = this.#chunks[0];
    const n = Math.min(head.length, p.length);
    p.set(head.subarray(0, n));
    if (n === head.length) this.#chunks.shift();
    else this.#chunks[0] = head.subarray(n);
    this.#queued -= n;
    if (this.#queued < HIGH_WATER && this.#socket.isPaused()) this.#socket.resume();
    return n;
  }

  write(p: Uint8Array): Promise<number> {
    if (this.#closed || this.#socket.destroyed) {
      return Promise.reject(new Deno.errors.BrokenPipe("the connection is closed"));
    }
    // A copy: the caller may reuse its buffer once the write resolves, before node has sent it all.
    const copy = Buffer.from(p);
    return new Promise((resolve, reject) => {
      this.#socket.write(copy, (e) => e ? reject(e) : resolve(p.length));
    });
  }

  closeWrite(): Promise<void> {
    return new Promise((resolve) => this.#socket.end(() => resolve()));
  }

  close(): void {
    if (this.#closed) throw new Deno.errors.BadResource("the connection is already closed");
    this.#closed = true;
    this.#socket.destroy();
    this.#notify();
  }
}
