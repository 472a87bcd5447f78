/**
 * Listening TCP sockets for servers that face many clients (docs/architecture.md, "Client sockets"): Deno's own, or
 * non-blocking sockets on an epoll loop through the C library, which spare each read and write Deno's asynchronous
 * operation. Both read and write like a Deno.TcpConn.
 */
import { EpollListener, type TcpListening } from "./epoll_socket.ts";
import { openLibc } from "./libc.ts";

export type { TcpConnection, TcpListening } from "./epoll_socket.ts";

/** How a server's sockets are made: "epoll" where it can run (Linux, an IPv4 address), else Deno's. */
export type SocketKind = "deno" | "epoll";

/** The socket kinds, for command-line checks. */
export const SOCKET_KINDS: readonly SocketKind[] = ["epoll", "deno"];

/** A listening socket, its kind, and how to end what it started once its connections are closed. */
export interface TcpListener extends TcpListening {
  /** What the listener turned out to be ("epoll" may fall back to "deno"). */
  readonly kind: SocketKind;
  /** Ends the listener's loop, if it has one; call after it and its connections are closed. */
  finish(): Promise<void>;
}

/** Listens on `hostname:port` (0: a free port) with sockets of `kind`, falling back to Deno's where epoll cannot run. */
export function listenTcp(hostname: string, port: number, kind: SocketKind): TcpListener {
  if (kind === "epoll") {
    const libc = openLibc();
    if (libc !== null) {
      let l: EpollListener | null;
      try {
        l = EpollListener.open(libc, hostname, port);
      } catch (e) {
        libc.close();
        throw e;
      }
      if (l !== null) return listener("epoll", l, l.closeLoop.bind(l));
      libc.close();
    }
  }
  return listener("deno", Deno.listen({ hostname, port, transport: "tcp" }), () => Promise.resolve());
}

function listener(kind: SocketKind, l: TcpListening, finish: () => Promise<void>): TcpListener {
  return { kind, addr: l.addr, accept: () => l.accept(), close: () => l.close(), finish };
}
