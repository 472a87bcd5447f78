/**
 * One epoll instance and the loop that waits on it (docs/architecture.md, "Client sockets"). Sockets are watched
 * edge-triggered, once, for input and output; each wake-up hands every ready socket its events, and the sockets
 * read and write with plain non-blocking calls until they would block. The wait itself runs on one of Deno's
 * threads, so the event loop goes on meanwhile.
 */
import {
  EPOLL_CTL_ADD,
  EPOLL_CTL_DEL,
  EPOLLERR,
  EPOLLET,
  EPOLLHUP,
  EPOLLIN,
  EPOLLOUT,
  EPOLLRDHUP,
  type Libc,
  SOCK_CLOEXEC,
  SOCK_NONBLOCK,
  socketError,
} from "./libc.ts";

/** What a watched socket is told: the epoll event bits that came. */
export interface EpollWatcher {
  onEvents(events: number): void;
}

/** Events per wake-up; more ready sockets are handed over at the next one. */
const MAX_EVENTS = 256;
/** What every socket is watched for. */
const WATCH = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

/** An epoll instance with its wait loop; made by the listener that owns it, closed with it. */
export class EpollLoop {
  /** The C calls, for the sockets on this loop. */
  readonly libc: Libc;
  readonly #ep: number;
  /** An eventfd on the loop: written to wake a wait, so that closing does not wait for traffic. */
  readonly #wakeFd: number;
  readonly #events: Uint8Array;
  readonly #view: DataView;
  readonly #ctl: Uint8Array;
  readonly #ctlView: DataView;
  /** Watchers by fd. */
  readonly #watchers: (EpollWatcher | undefined)[] = [];
  #closing = false;
  readonly #done: Promise<void>;

  constructor(libc: Libc) {
    this.libc = libc;
    const c = libc.c;
    this.#ep = c.epoll_create1(SOCK_CLOEXEC);
    if (this.#ep < 0) throw socketError("epoll_create1", libc.errno);
    this.#wakeFd = c.eventfd(0, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (this.#wakeFd < 0) {
      const e = libc.errno;
      c.close(this.#ep);
      throw socketError("eventfd", e);
    }
    this.#events = new Uint8Array(MAX_EVENTS * libc.epollEventSize);
    this.#view = new DataView(this.#events.buffer);
    this.#ctl = new Uint8Array(libc.epollEventSize);
    this.#ctlView = new DataView(this.#ctl.buffer);
    this.#add(this.#wakeFd, EPOLLIN);
    this.#done = this.#run();
  }

  /** Watches socket `fd` for input and output, edge-triggered; `w` hears of its events until `unwatch`. */
  watch(fd: number, w: EpollWatcher): void {
    this.#add(fd, WATCH);
    this.#watchers[fd] = w;
  }

  /** Stops telling socket `fd`'s watcher of events; call before closing the socket. */
  unwatch(fd: number): void {
    if (this.#watchers[fd] === undefined) return;
    this.#watchers[fd] = undefined;
    this.libc.c.epoll_ctl(this.#ep, EPOLL_CTL_DEL, fd, this.#ctl);
  }

  /** Ends the loop; resolves once its wait returned and the instance is closed. */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      const one = new Uint8Array(8);
      one[0] = 1;
      this.libc.c.write(this.#wakeFd, one, 8n);
    }
    return this.#done;
  }

  #add(fd: number, events: number): void {
    const v = this.#ctlView;
    v.setUint32(0, events >>> 0, true);
    v.setInt32(this.libc.epollDataOffset, fd, true);
    v.setInt32(this.libc.epollDataOffset + 4, 0, true);
    if (this.libc.c.epoll_ctl(this.#ep, EPOLL_CTL_ADD, fd, this.#ctl) !== 0) {
      throw socketError(`epoll_ctl(ADD, fd ${fd})`, this.libc.errno);
    }
  }

  async #run(): Promise<void> {
    const c = this.libc.c, ep = this.#ep, events = this.#events, view = this.#view;
    const size = this.libc.epollEventSize, data = this.libc.epollDataOffset;
    try {
      while (!this.#closing) {
        // On a thread of Deno's: its result comes back as an event of the event loop's, taking its turn with timers
        // and Deno's own sockets. A failed wait (its errno is that thread's) just goes round.
        const n = await c.epoll_wait_blocking(ep, events, MAX_EVENTS, -1);
        for (let k = 0; k < n; k++) {
          const fd = view.getInt32(k * size + data, true);
          const w = this.#watchers[fd];
          if (w !== undefined) w.onEvents(view.getUint32(k * size, true));
        }
      }
    } finally {
      c.close(this.#wakeFd);
      c.close(ep);
    }
  }
}

/** Whether epoll event bits `events` mean the socket may be read (data, the peer's end, or an error to collect). */
export function readableEvent(events: number): boolean {
  return (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) !== 0;
}

/** Whether they mean the socket may be written (room, or an error to collect). */
export function writableEvent(events: number): boolean {
  return (events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) !== 0;
}

/** Whether they mean the peer ended or the connection failed: reading on to the end is then safe. */
export function endEvent(events: number): boolean {
  return (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) !== 0;
}
