/**
 * TCP connections and a listener on an EpollLoop, read and written like Deno's (docs/architecture.md, "Client
 * sockets"). A read or write is one non-blocking call made at once; only when the socket would block does it wait
 * for the loop's next edge. A read shorter than asked means the socket was drained, so the next read waits for the
 * next edge without a call that would only say so; once the peer has ended, reads go on to the end instead.
 */
import type { ByteConn } from "../tls/mod.ts";
import { endEvent, EpollLoop, readableEvent, writableEvent } from "./epoll_loop.ts";
import {
  AF_INET,
  EAGAIN,
  EINTR,
  IPPROTO_TCP,
  type Libc,
  MSG_NOSIGNAL,
  SHUT_WR,
  SO_REUSEADDR,
  SOCK_CLOEXEC,
  SOCK_NONBLOCK,
  SOCK_STREAM,
  socketError,
  SOL_SOCKET,
  TCP_NODELAY,
} from "./libc.ts";

/** A TCP connection as the WebSocket server needs it: Deno.TcpConn's reading, writing and closing. */
export interface TcpConnection extends ByteConn {
  readonly remoteAddr: Deno.NetAddr;
  setNoDelay(noDelay?: boolean): void;
}

/** A listening TCP socket as the WebSocket server needs it: Deno.TcpListener's accept and close. */
export interface TcpListening {
  readonly addr: Deno.NetAddr;
  accept(): Promise<TcpConnection>;
  close(): void;
}

interface Waiter<T> {
  p: Uint8Array;
  resolve: (v: T) => void;
  reject: (e: Error) => void;
}

/** A non-blocking call's outcome that means: wait for the next edge. */
const WOULD_BLOCK = -2;
/** A call's outcome that means: a signal interrupted it, make it again. */
const RETRY = -3;

/** After call `what` returned -1: RETRY (interrupted) or WOULD_BLOCK; throws Deno's error for anything else. */
function failed(libc: Libc, what: string): number {
  const e = libc.errno;
  if (e === EINTR) return RETRY;
  if (e === EAGAIN) return WOULD_BLOCK;
  throw socketError(what, e);
}

const ONE = new Uint8Array(new Int32Array([1]).buffer);
const ZERO = new Uint8Array(4);

/** Makes waiter `w`'s call again: true when that settled it (done or failed), false when it must wait on. */
function settle<T>(w: Waiter<T>, attempt: (p: Uint8Array) => T): boolean {
  try {
    const v = attempt(w.p);
    if (v === WOULD_BLOCK) return false;
    w.resolve(v);
  } catch (e) {
    w.reject(e as Error);
  }
  return true;
}

function closedError(): Error {
  return new Deno.errors.BadResource("the connection is closed");
}

/** One accepted TCP connection on an EpollLoop. */
export class EpollConn implements TcpConnection {
  readonly remoteAddr: Deno.NetAddr;
  readonly #loop: EpollLoop;
  readonly #libc: Libc;
  readonly #fd: number;
  #readable = true;
  #writable = true;
  /** The peer ended or the connection failed: read on until the end or the error. */
  #ending = false;
  #closed = false;
  #reader: Waiter<number | null> | null = null;
  #writer: Waiter<number> | null = null;

  constructor(loop: EpollLoop, fd: number, remoteAddr: Deno.NetAddr) {
    this.#loop = loop;
    this.#libc = loop.libc;
    this.#fd = fd;
    this.remoteAddr = remoteAddr;
    loop.watch(fd, this);
  }

  /** Reads into `p`: the number of bytes, or null at the end of the stream. */
  read(p: Uint8Array): Promise<number | null> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#reader !== null) return Promise.reject(new Deno.errors.Busy("a read is already waiting"));
    if (p.length === 0) return Promise.resolve(0);
    if (this.#readable) {
      try {
        const n = this.#recv(p);
        if (n !== WOULD_BLOCK) return Promise.resolve(n);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise((resolve, reject) => this.#reader = { p, resolve, reject });
  }

  /** Writes some of `p`: the number of bytes written, after waiting for room when there was none. */
  write(p: Uint8Array): Promise<number> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#writer !== null) return Promise.reject(new Deno.errors.Busy("a write is already waiting"));
    if (p.length === 0) return Promise.resolve(0);
    if (this.#writable) {
      try {
        const n = this.#send(p);
        if (n !== WOULD_BLOCK) return Promise.resolve(n);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise((resolve, reject) => this.#writer = { p, resolve, reject });
  }

  /** Writes what fits of `p` now, without waiting: the number of bytes written, 0 when there is no room. */
  tryWrite(p: Uint8Array): number {
    if (this.#closed) throw closedError();
    if (this.#writer !== null || !this.#writable || p.length === 0) return 0;
    const n = this.#send(p);
    return n === WOULD_BLOCK ? 0 : n;
  }

  /** Ends this side's stream; the peer reads its end. */
  closeWrite(): Promise<void> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#libc.c.shutdown(this.#fd, SHUT_WR) !== 0) {
      return Promise.reject(socketError("shutdown", this.#libc.errno));
    }
    return Promise.resolve();
  }

  /** Closes the connection at once; a waiting read or write fails. Throws BadResource when it already was. */
  close(): void {
    if (this.#closed) throw closedError();
    this.#closed = true;
    this.#loop.unwatch(this.#fd);
    this.#libc.c.close(this.#fd);
    const r = this.#reader, w = this.#writer;
    this.#reader = this.#writer = null;
    r?.reject(closedError());
    w?.reject(closedError());
  }

  /** Sets TCP_NODELAY. */
  setNoDelay(noDelay = true): void {
    if (this.#closed) throw closedError();
    this.#libc.c.setsockopt(this.#fd, IPPROTO_TCP, TCP_NODELAY, noDelay ? ONE : ZERO, 4);
  }

  /** @internal The loop's events for this socket. */
  onEvents(events: number): void {
    if (endEvent(events)) this.#ending = true;
    if (readableEvent(events)) {
      this.#readable = true;
      if (this.#reader !== null && settle(this.#reader, this.#recvInto)) this.#reader = null;
    }
    if (writableEvent(events) && !this.#closed) {
      this.#writable = true;
      if (this.#writer !== null && settle(this.#writer, this.#sendFrom)) this.#writer = null;
    }
  }

  readonly #recvInto = (p: Uint8Array): number | null => this.#recv(p);
  readonly #sendFrom = (p: Uint8Array): number => this.#send(p);

  /** One recv: bytes read, null at the end, or WOULD_BLOCK. */
  #recv(p: Uint8Array): number | null {
    const c = this.#libc.c;
    for (;;) {
      const n = c.recv(this.#fd, p, BigInt(p.length), 0);
      if (n > 0) {
        if (n < p.length && !this.#ending) this.#readable = false;
        return n;
      }
      if (n === 0) return null;
      if (failed(this.#libc, "recv") === WOULD_BLOCK) {
        this.#readable = false;
        return WOULD_BLOCK;
      }
    }
  }

  /** One send: bytes written, or WOULD_BLOCK. */
  #send(p: Uint8Array): number {
    const c = this.#libc.c;
    for (;;) {
      const n = c.send(this.#fd, p, BigInt(p.length), MSG_NOSIGNAL);
      if (n >= 0) {
        if (n < p.length) this.#writable = false;
        return n;
      }
      if (failed(this.#libc, "send") === WOULD_BLOCK) {
        this.#writable = false;
        return WOULD_BLOCK;
      }
    }
  }
}

/** An IPv4 address as `struct sockaddr_in`. */
function sockaddr(hostname: string, port: number): Uint8Array | null {
  const ip = hostname === "localhost" ? "127.0.0.1" : hostname;
  const parts = ip.split(".");
  if (parts.length !== 4 || !parts.every((s) => /^\d{1,3}$/.test(s) && Number(s) <= 255)) return null;
  const a = new Uint8Array(16), v = new DataView(a.buffer);
  v.setUint16(0, AF_INET, true);
  v.setUint16(2, port, false);
  parts.forEach((s, i) => a[4 + i] = Number(s));
  return a;
}

function netAddr(a: Uint8Array): Deno.NetAddr {
  const v = new DataView(a.buffer, a.byteOffset);
  return { transport: "tcp", hostname: `${a[4]}.${a[5]}.${a[6]}.${a[7]}`, port: v.getUint16(2, false) };
}

/** A listening TCP socket on an EpollLoop of its own; connections it accepts share that loop. */
export class EpollListener implements TcpListening {
  readonly addr: Deno.NetAddr;
  readonly #loop: EpollLoop;
  readonly #libc: Libc;
  readonly #fd: number;
  readonly #peer = new Uint8Array(16);
  readonly #peerLen = new Uint32Array(1);
  #readable = true;
  #closed = false;
  #finished: Promise<void> | null = null;
  #waiter: { resolve: (c: TcpConnection) => void; reject: (e: Error) => void } | null = null;

  /** Listens on IPv4 address `hostname` (or localhost) and `port` (0: a free one); null for any other hostname. */
  static open(libc: Libc, hostname: string, port: number): EpollListener | null {
    const addr = sockaddr(hostname, port);
    if (addr === null) return null;
    const c = libc.c;
    const fd = c.socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) throw socketError("socket", libc.errno);
    const len = new Uint32Array([16]);
    if (
      c.setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, ONE, 4) !== 0 || c.bind(fd, addr, 16) !== 0 ||
      c.listen(fd, 1024) !== 0 || c.getsockname(fd, addr, new Uint8Array(len.buffer)) !== 0
    ) {
      const e = libc.errno;
      c.close(fd);
      throw socketError(`listening on ${hostname}:${port}`, e);
    }
    return new EpollListener(libc, fd, netAddr(addr));
  }

  private constructor(libc: Libc, fd: number, addr: Deno.NetAddr) {
    this.#libc = libc;
    this.#fd = fd;
    this.addr = addr;
    this.#loop = new EpollLoop(libc);
    this.#loop.watch(fd, this);
  }

  /** The next connection; fails with BadResource once the listener is closed. */
  accept(): Promise<TcpConnection> {
    if (this.#closed) return Promise.reject(closedError());
    if (this.#waiter !== null) return Promise.reject(new Deno.errors.Busy("an accept is already waiting"));
    if (this.#readable) {
      try {
        const conn = this.#accept();
        if (conn !== null) return Promise.resolve(conn);
      } catch (e) {
        return Promise.reject(e);
      }
    }
    return new Promise((resolve, reject) => this.#waiter = { resolve, reject });
  }

  /** Stops listening; connections already accepted stay open, on a loop that ends with `closed`. */
  close(): void {
    if (this.#closed) throw closedError();
    this.#closed = true;
    this.#loop.unwatch(this.#fd);
    this.#libc.c.close(this.#fd);
    const w = this.#waiter;
    this.#waiter = null;
    w?.reject(closedError());
  }

  /** Ends the loop the accepted connections run on (after they are closed); then the C library is unbound. */
  closeLoop(): Promise<void> {
    return this.#finished ??= this.#loop.close().then(() => this.#libc.close());
  }

  /** @internal The loop's events for the listening socket. */
  onEvents(events: number): void {
    if (!readableEvent(events)) return;
    this.#readable = true;
    const w = this.#waiter;
    if (w === null) return;
    try {
      const conn = this.#accept();
      if (conn === null) return;
      this.#waiter = null;
      w.resolve(conn);
    } catch (e) {
      this.#waiter = null;
      w.reject(e as Error);
    }
  }

  #accept(): EpollConn | null {
    const c = this.#libc.c;
    for (;;) {
      this.#peerLen[0] = 16;
      const fd = c.accept4(this.#fd, this.#peer, new Uint8Array(this.#peerLen.buffer), SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd >= 0) {
        try {
          return new EpollConn(this.#loop, fd, netAddr(this.#peer));
        } catch (e) {
          c.close(fd);
          throw e;
        }
      }
      if (failed(this.#libc, "accept4") === WOULD_BLOCK) {
        this.#readable = false;
        return null;
      }
    }
  }
}
