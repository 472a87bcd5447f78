/**
 * The C library calls an epoll socket loop needs (docs/architecture.md, "Client sockets"), bound through Deno's FFI.
 * Linux only: `openLibc` returns null elsewhere, or where the library cannot be opened, and the caller uses Deno's
 * own sockets.
 */

/** recv and send return ssize_t; read as a 32-bit int it is exact below 2 GiB and spares a BigInt per call. */
const SYMBOLS = {
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  bind: { parameters: ["i32", "buffer", "u32"], result: "i32" },
  listen: { parameters: ["i32", "i32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  accept4: { parameters: ["i32", "buffer", "buffer", "i32"], result: "i32" },
  shutdown: { parameters: ["i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  recv: { parameters: ["i32", "buffer", "usize", "i32"], result: "i32" },
  send: { parameters: ["i32", "buffer", "usize", "i32"], result: "i32" },
  write: { parameters: ["i32", "buffer", "usize"], result: "i32" },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  /** epoll_wait on a thread of Deno's, for waiting without blocking the event loop. */
  epoll_wait_blocking: {
    name: "epoll_wait",
    parameters: ["i32", "buffer", "i32", "i32"],
    result: "i32",
    nonblocking: true,
  },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** The bound calls. */
export type LibcSymbols = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** An open binding of the C library, with errno of the calling (JavaScript) thread. */
export class Libc {
  readonly #lib: Deno.DynamicLibrary<typeof SYMBOLS>;
  readonly #errno: Deno.UnsafePointerView;
  /** The calls. */
  readonly c: LibcSymbols;
  /** Bytes of one `struct epoll_event`: packed on x86-64, aligned elsewhere. */
  readonly epollEventSize: number;
  /** Offset of the event's data (where the fd is kept) in it. */
  readonly epollDataOffset: number;

  constructor(lib: Deno.DynamicLibrary<typeof SYMBOLS>) {
    this.#lib = lib;
    this.c = lib.symbols;
    this.#errno = new Deno.UnsafePointerView(lib.symbols.__errno_location()!);
    const packed = Deno.build.arch === "x86_64";
    this.epollEventSize = packed ? 12 : 16;
    this.epollDataOffset = packed ? 4 : 8;
  }

  /** errno as the last call on this thread left it. */
  get errno(): number {
    return this.#errno.getInt32();
  }

  /** Unbinds the library; no call may follow. */
  close(): void {
    this.#lib.close();
  }
}

/** Binds the C library, or returns null where epoll sockets cannot run (not Linux, no FFI permission, no libc). */
export function openLibc(): Libc | null {
  if (Deno.build.os !== "linux") return null;
  try {
    return new Libc(Deno.dlopen("libc.so.6", SYMBOLS));
  } catch {
    return null;
  }
}

/** Constants of Linux's socket and epoll interface (the same on x86-64 and arm64). */
export const AF_INET = 2;
export const SOCK_STREAM = 1;
export const SOCK_NONBLOCK = 0o4000;
export const SOCK_CLOEXEC = 0o2000000;
export const SOL_SOCKET = 1;
export const SO_REUSEADDR = 2;
export const IPPROTO_TCP = 6;
export const TCP_NODELAY = 1;
export const SHUT_WR = 1;
export const MSG_NOSIGNAL = 0x4000;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
export const EPOLLIN = 0x001;
export const EPOLLOUT = 0x004;
export const EPOLLERR = 0x008;
export const EPOLLHUP = 0x010;
export const EPOLLRDHUP = 0x2000;
export const EPOLLET = 0x80000000;
export const EINTR = 4;
export const EAGAIN = 11;
export const EPIPE = 32;
export const EADDRINUSE = 98;
export const EADDRNOTAVAIL = 99;
export const ECONNABORTED = 103;
export const ECONNRESET = 104;
export const ENOTCONN = 107;

/** The errors Deno's own sockets throw, with the errno names, by errno. */
const ERRNO_ERRORS: Record<number, [string, new (message: string) => Error]> = {
  [EPIPE]: ["EPIPE", Deno.errors.BrokenPipe],
  [ECONNRESET]: ["ECONNRESET", Deno.errors.ConnectionReset],
  [ECONNABORTED]: ["ECONNABORTED", Deno.errors.ConnectionAborted],
  [ENOTCONN]: ["ENOTCONN", Deno.errors.NotConnected],
  [EADDRINUSE]: ["EADDRINUSE", Deno.errors.AddrInUse],
  [EADDRNOTAVAIL]: ["EADDRNOTAVAIL", Deno.errors.AddrNotAvailable],
};

/** Deno's error for errno `e` of call `what`, as Deno's own sockets would throw it. */
export function socketError(what: string, e: number): Error {
  const known = ERRNO_ERRORS[e];
  return known === undefined ? new Error(`${what} failed (errno ${e})`) : new known[1](`${what} failed: ${known[0]}`);
}
