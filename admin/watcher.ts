/** Most messages a watcher may send a second before it is closed. */
export const MAX_MESSAGES_PER_S = 50;

/** One connected watcher. */
export class Watcher {
  readonly topics: Set<string> = new Set();
  /** Topics whose state it missed (a message was dropped): it gets a whole snapshot next time. */
  readonly stale: Set<string> = new Set();
  /** Messages not sent to it because it was reading too slowly. */
  dropped = 0;
  /** When it went over its buffer bound, if it is over it. */
  slowSince: number | null = null;
  #window = { start: 0, count: 0 };

  constructor(readonly ws: WebSocket, readonly id: number) {}

  /** Counts one message it sent; false when it sends more than its share. */
  allowMessage(now: number): boolean {
    if (now - this.#window.start >= 1000) this.#window = { start: now, count: 0 };
    return ++this.#window.count <= MAX_MESSAGES_PER_S;
  }
}
