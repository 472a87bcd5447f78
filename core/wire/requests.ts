import { ChannelClosedError, RemoteError, RequestTimeoutError } from "./errors.ts";

/** One request awaiting its reply. */
interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
  name: string;
}

/**
 * The requests a channel sent and awaits replies to, by request id: each resolves with its reply, rejects with the
 * peer's error, or times out.
 */
export class PendingRequests {
  #pending = new Map<number, Pending>();
  #nextId = 1;

  /** Number of requests awaiting a reply. */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * Registers a request named `name` to `peer`, and returns its id and the promise of its reply, which rejects with
   * RequestTimeoutError after `timeoutMs`.
   */
  open<R>(name: string, peer: string, timeoutMs: number): { id: number; reply: Promise<R> } {
    const id = this.#nextId;
    this.#nextId = id >= 0x7fffffff ? 1 : id + 1;
    const reply = new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new RequestTimeoutError(`${name} to ${peer} got no reply within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer, name });
    });
    return { id, reply };
  }

  /** Settles request `id` with the peer's reply, or its error text when `failed`; false when no such request waits. */
  settle(id: number, failed: boolean, value: unknown, peer: string): boolean {
    const p = this.#pending.get(id);
    if (!p) return false;
    this.#pending.delete(id);
    clearTimeout(p.timer);
    if (failed) p.reject(new RemoteError(`${p.name} failed on ${peer}: ${String(value)}`));
    else p.resolve(value);
    return true;
  }

  /** Rejects every waiting request: the channel to `peer` closed for `reason`. */
  failAll(peer: string, reason: string): void {
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(new ChannelClosedError(`${p.name} to ${peer}: channel closed (${reason})`));
    }
    this.#pending.clear();
  }
}
