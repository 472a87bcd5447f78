/**
 * The admin watch socket (`GET /api/watch`): a WebSocket carrying JSON
 * messages by topic (`cluster`, `space:ID`, `entity:ID`), subscribed and
 * unsubscribed by message. A browser cannot set headers on a WebSocket, so
 * the socket is opened with a short-lived single-use ticket from
 * `POST /api/watch/ticket` (behind the bearer token). The number of watchers
 * is bounded, and a watcher that reads slowly loses samples: nothing is sent
 * to it while more than `maxBufferedBytes` wait in its socket.
 */
import { errorText } from "../core/errors.ts";
import type { Context } from "hono";
import type { Socket } from "node:net";
import type { Buffer } from "node:buffer";
import { RequestError } from "../core/views.ts";
import { errorResponse } from "./errors.ts";
import { type Feed, type FeedHost, openFeed, type WatchSource } from "./watch_feeds.ts";
import { MAX_MESSAGES_PER_S, Watcher } from "./watcher.ts";

export type { WatchSource } from "./watch_feeds.ts";

/** How the watch socket is bounded and paced. */
export interface WatchOptions {
  /** Most watchers at once; more are refused with close code 1013. [32] */
  maxWatchers?: number;
  /** Bytes waiting in a watcher's socket past which it gets nothing more until it has read them. [1 MiB] */
  maxBufferedBytes?: number;
  /** How long a ticket stays valid (ms). [30 s] */
  ticketTtlMs?: number;
  /** Most topics one watcher follows. [32] */
  maxTopics?: number;
  /** Most topics gathered at once, for all watchers (each polls the cellapps). [64] */
  maxFeeds?: number;
  /** How often positions and entities are sampled (ms); at least 200 (5 a second). [200] */
  sampleMs?: number;
  /** How often loads are sent (ms). [1000] */
  loadMs?: number;
  /** Reals in a cell past which its entities are sent as counts per square. [3000] */
  denseCell?: number;
  /** How long a watcher may stay over its buffer bound before it is closed (ms). [30 s] */
  slowCloseMs?: number;
}

/** What the node:http server hands the watch route for an upgrade (see watch_upgrade.ts). */
export interface NodeUpgrade {
  socket: Socket;
  head: Buffer;
  /** Set by the route that took the socket over; otherwise its answer is written to the socket as HTTP. */
  taken?: boolean;
}

/** Largest message a watcher may send (bytes). */
const MAX_MESSAGE = 4096;
/** Most unused tickets held at once. */
const MAX_TICKETS = 256;

/** The watchers, their tickets and the feeds they follow. */
export class WatchHub implements FeedHost {
  readonly source: WatchSource;
  readonly opts: Required<WatchOptions>;
  readonly #watchers = new Set<Watcher>();
  readonly #tickets = new Map<string, number>();
  readonly #feeds = new Map<string, Feed>();
  #nextId = 1;
  #closed = false;

  constructor(source: WatchSource, opts: WatchOptions = {}) {
    this.source = source;
    this.opts = {
      maxWatchers: opts.maxWatchers ?? 32,
      maxBufferedBytes: opts.maxBufferedBytes ?? 1024 * 1024,
      ticketTtlMs: opts.ticketTtlMs ?? 30_000,
      maxTopics: opts.maxTopics ?? 32,
      maxFeeds: opts.maxFeeds ?? 64,
      sampleMs: Math.max(200, opts.sampleMs ?? 200),
      loadMs: opts.loadMs ?? 1000,
      denseCell: opts.denseCell ?? 3000,
      slowCloseMs: opts.slowCloseMs ?? 30_000,
    };
  }

  /** Watchers connected now. */
  get watchers(): number {
    return this.#watchers.size;
  }

  /** Topics being fed now (each polled once, whoever follows it). */
  get feeds(): string[] {
    return [...this.#feeds.keys()];
  }

  /** Each watcher's topics, bytes waiting in its socket and messages it missed (for operators and tests). */
  stats(): { id: number; topics: string[]; bufferedAmount: number; dropped: number }[] {
    return [...this.#watchers].map((w) => ({
      id: w.id,
      topics: [...w.topics],
      bufferedAmount: w.ws.readyState === WebSocket.OPEN ? w.ws.bufferedAmount : 0,
      dropped: w.dropped,
    }));
  }

  /** POST /api/watch/ticket: a single-use ticket to open the socket with, within `ticketTtlMs`. */
  issueTicket(): { ticket: string; expiresInMs: number } {
    const now = Date.now();
    for (const [t, until] of this.#tickets) if (until <= now) this.#tickets.delete(t);
    if (this.#tickets.size >= MAX_TICKETS) {
      throw new RequestError(
        "unavailable",
        `${MAX_TICKETS} watch tickets are waiting to be used; use them or wait ${this.opts.ticketTtlMs} ms`,
      );
    }
    const bytes = crypto.getRandomValues(new Uint8Array(24));
    const ticket = btoa(String.fromCharCode(...bytes)).replaceAll("+", "-").replaceAll("/", "_");
    this.#tickets.set(ticket, now + this.opts.ticketTtlMs);
    return { ticket, expiresInMs: this.opts.ticketTtlMs };
  }

  /** Uses up a ticket; false when it is unknown, used or expired. */
  #redeem(ticket: string | undefined): boolean {
    if (!ticket) return false;
    const until = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    return until !== undefined && until > Date.now();
  }

  /**
   * GET /api/watch, after the Host and Origin guards: checks the ticket and
   * upgrades the connection (handed over by watch_upgrade.ts in `c.env`).
   */
  handler = (c: Context): Response => {
    const up = (c.env as { upgrade?: NodeUpgrade } | undefined)?.upgrade;
    if (!up || c.req.header("upgrade")?.toLowerCase() !== "websocket") {
      c.header("Upgrade", "websocket");
      return c.json({
        error: {
          code: "upgrade_required",
          message:
            "GET /api/watch is a WebSocket: connect with ws:// (wss:// when served over HTTPS) and ?ticket= from POST /api/watch/ticket",
        },
      }, 426);
    }
    if (!this.#redeem(c.req.query("ticket"))) {
      return errorResponse(
        c,
        401,
        "unauthorized",
        "the watch socket needs ?ticket= from POST /api/watch/ticket, used once within " +
          `${this.opts.ticketTtlMs} ms; this one is missing, used or expired`,
      );
    }
    if (this.#closed) return errorResponse(c, 503, "unavailable", "the admin API is stopping");
    let ws: WebSocket;
    try {
      ws = Deno.upgradeWebSocket(c.req.raw, { socket: up.socket, head: up.head, idleTimeout: 30 }).socket;
    } catch (e) {
      return errorResponse(c, 400, "bad_request", `not a WebSocket handshake: ${errorText(e)}`);
    }
    up.taken = true;
    // The socket was handed to Deno's WebSocket (a copy of its descriptor): the node one goes when it closes.
    ws.addEventListener("close", () => up.socket.destroy());
    if (this.#watchers.size >= this.opts.maxWatchers) {
      const why = `the admin API has ${this.#watchers.size} watchers, its limit; close one and try again`;
      ws.onopen = () => {
        ws.send(JSON.stringify({ op: "error", code: "too_many_watchers", message: why }));
        ws.close(1013, why.slice(0, 120));
      };
      return c.body(null, 200);
    }
    this.#accept(ws);
    return c.body(null, 200);
  };

  #accept(ws: WebSocket): void {
    const w = new Watcher(ws, this.#nextId++);
    this.#watchers.add(w);
    ws.onopen = () => this.#reply(w, { op: "hello", watcher: w.id, topics: ["cluster", "space:ID", "entity:ID"] });
    ws.onmessage = (e) => void this.#onMessage(w, e.data);
    ws.onclose = () => this.#drop(w);
    ws.onerror = () => {};
  }

  async #onMessage(w: Watcher, data: unknown): Promise<void> {
    if (!w.allowMessage(performance.now())) {
      w.ws.close(1008, `more than ${MAX_MESSAGES_PER_S} messages a second`);
      return;
    }
    if (typeof data !== "string") return this.#error(w, "messages are JSON text, not binary");
    if (data.length > MAX_MESSAGE) return this.#error(w, `messages are limited to ${MAX_MESSAGE} bytes`);
    let msg: { op?: unknown; topic?: unknown };
    try {
      msg = JSON.parse(data);
    } catch {
      return this.#error(w, 'the message is not JSON; send {"op": "subscribe", "topic": "cluster"}');
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      return this.#error(w, 'the message must be an object like {"op": "subscribe", "topic": "cluster"}');
    }
    const { op, topic } = msg;
    if (op !== "subscribe" && op !== "unsubscribe") {
      return this.#error(w, `op must be "subscribe" or "unsubscribe" (got ${JSON.stringify(op)?.slice(0, 40)})`);
    }
    const name = parseTopic(topic);
    if (typeof name !== "string") return this.#error(w, name.error);
    if (op === "unsubscribe") {
      if (w.topics.delete(name)) this.#leave(w, name);
      return this.#reply(w, { op: "unsubscribed", topic: name });
    }
    if (w.topics.has(name)) return this.#reply(w, { op: "subscribed", topic: name });
    if (w.topics.size >= this.opts.maxTopics) {
      return this.#error(w, `a watcher follows at most ${this.opts.maxTopics} topics; unsubscribe from one`, name);
    }
    w.topics.add(name);
    let feed = this.#feeds.get(name);
    if (!feed && this.#feeds.size >= this.opts.maxFeeds) {
      w.topics.delete(name);
      return this.#error(
        w,
        `the admin API follows ${this.#feeds.size} topics for its watchers, its limit; try one already followed`,
        name,
      );
    }
    if (!feed) {
      try {
        feed = await openFeed(this, name);
      } catch (e) {
        w.topics.delete(name);
        return this.#error(w, errorText(e), name);
      }
      // Another watcher may have opened it meanwhile, or this one left or unsubscribed.
      const other = this.#feeds.get(name);
      if (other) {
        feed.stop();
        feed = other;
      } else this.#feeds.set(name, feed);
    }
    if (!w.topics.has(name) || !this.#watchers.has(w)) return this.#leaveIfEmpty(feed);
    feed.watchers.add(w);
    this.#reply(w, { op: "subscribed", topic: name });
    w.stale.add(name);
    feed.welcome(w);
  }

  #leave(w: Watcher, topic: string): void {
    w.stale.delete(topic);
    const feed = this.#feeds.get(topic);
    if (!feed) return;
    feed.watchers.delete(w);
    this.#leaveIfEmpty(feed);
  }

  #leaveIfEmpty(feed: Feed): void {
    if (feed.watchers.size > 0 || this.#feeds.get(feed.topic) !== feed) return;
    feed.stop();
    this.#feeds.delete(feed.topic);
  }

  #drop(w: Watcher): void {
    if (!this.#watchers.delete(w)) return;
    for (const t of w.topics) this.#leave(w, t);
    w.topics.clear();
  }

  /** Ends a topic for its watchers (a space was deleted): they are told why and unsubscribed. */
  endTopic(feed: Feed, why: string): void {
    for (const w of [...feed.watchers]) {
      w.topics.delete(feed.topic);
      this.#reply(w, { op: "unsubscribed", topic: feed.topic, reason: why });
    }
    feed.watchers.clear();
    this.#leaveIfEmpty(feed);
  }

  /**
   * Sends `msg` (stringified once) to the watchers of `feed` that are keeping
   * up; a watcher over its buffer bound misses it and is marked stale for the topic.
   */
  publish(feed: Feed, msg: Record<string, unknown>, only?: Watcher): boolean {
    const text = JSON.stringify({ topic: feed.topic, ...msg });
    let all = true;
    for (const w of only ? [only] : feed.watchers) {
      if (this.#send(w, text)) continue;
      w.stale.add(feed.topic);
      all = false;
    }
    return all;
  }

  /** Sends to one watcher unless it is over its buffer bound; true when sent. */
  #send(w: Watcher, text: string): boolean {
    if (w.ws.readyState !== WebSocket.OPEN) return false;
    const now = performance.now();
    if (w.ws.bufferedAmount > this.opts.maxBufferedBytes) {
      w.dropped++;
      w.slowSince ??= now;
      if (now - w.slowSince > this.opts.slowCloseMs) {
        w.ws.close(1008, `read nothing of ${w.ws.bufferedAmount} bytes for ${this.opts.slowCloseMs} ms`);
      }
      return false;
    }
    w.slowSince = null;
    w.ws.send(text);
    return true;
  }

  #reply(w: Watcher, msg: Record<string, unknown>): void {
    this.#send(w, JSON.stringify(msg));
  }

  #error(w: Watcher, message: string, topic?: string): void {
    this.#reply(w, { op: "error", ...(topic === undefined ? {} : { topic }), message });
  }

  /** Closes every watcher and stops every feed. */
  close(): void {
    this.#closed = true;
    for (const w of [...this.#watchers]) {
      w.ws.close(1001, "the admin API is stopping");
      this.#drop(w);
    }
    for (const f of this.#feeds.values()) f.stop();
    this.#feeds.clear();
  }
}

/** `cluster`, `space:ID` or `entity:ID` in canonical form, or why not. */
function parseTopic(topic: unknown): string | { error: string } {
  const help = 'topic must be "cluster", "space:ID" or "entity:ID" with a positive integer ID';
  if (typeof topic !== "string") return { error: `${help} (got ${JSON.stringify(topic)?.slice(0, 40)})` };
  if (topic === "cluster") return topic;
  const m = /^(space|entity):([1-9][0-9]{0,15})$/.exec(topic);
  if (!m || Number(m[2]) > Number.MAX_SAFE_INTEGER) {
    return { error: `${help} (got ${JSON.stringify(topic.slice(0, 40))})` };
  }
  return `${m[1]}:${Number(m[2])}`;
}
