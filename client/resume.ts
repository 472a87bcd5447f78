/**
 * When and how the SDK takes its player back after a lost connection: which
 * closes count as lost (not said by the server); the retry loop over the
 * baseapps' client URLs with a growing pause, until one takes the resume
 * token, one refuses it for good, or the time is up; and a client's resume
 * state (the token, where it may resume, the attempt under way).
 */

import { C2S, type ClientMessage, CloseCode } from "../core/proto/mod.ts";

/** How a client resumes after a lost connection (ConnectOptions.resume). */
export interface ResumeOptions {
  /**
   * The baseapps' client URLs to try in turn (default: the one connected to, then the live baseapps the server
   * listed; resuming on another baseapp than the one that gave the token needs the cluster `--secret`).
   */
  urls?: string[];
  /** How long to keep trying (default 30,000 ms). */
  withinMs?: number;
}

/**
 * How one resume attempt ended; `final` when trying again cannot help (the token was refused); `next` when the
 * baseapp said which one holds the player (the token unused): the next attempt goes there.
 */
export type ResumeResult = { ok: true } | { ok: false; final: boolean; reason: string; next?: string };

/** Most redirects (resumeElsewhere) followed in a row, so that two baseapps pointing at each other end. */
const MAX_REDIRECTS = 4;

/**
 * Close codes of a connection lost rather than closed by the server (which always says why): no close frame
 * (1006; 0 in Deno), or one without a code (1005).
 */
const LOST = new Set([0, 1005, 1006, CloseCode.baseAppFenced]);

/** Whether a close with `code` is a lost connection (or one its fenced baseapp closed), which the client may resume. */
export function isLostConnection(code: number): boolean {
  return LOST.has(code);
}

/**
 * Tries `attempt` on the URLs in turn until one succeeds (resolves with its URL), one is final, `cancelled()`
 * says stop, or `withinMs` pass; resolves with the last reason otherwise.
 */
export async function retryResume(
  opts: ResumeOptions,
  fallbackUrl: string,
  attempt: (url: string, timeoutMs: number) => Promise<ResumeResult>,
  cancelled: () => boolean,
): Promise<{ ok: true; url: string } | { ok: false; reason: string }> {
  const urls = opts.urls?.length ? opts.urls : [fallbackUrl];
  const deadline = Date.now() + (opts.withinMs ?? 30_000);
  let reason = "no baseapp answered in time";
  let next: string | null = null;
  let redirects = 0;
  for (let i = 0, pause = 100; Date.now() < deadline && !cancelled();) {
    const url = next ?? urls[i++ % urls.length];
    next = null;
    const r = await attempt(url, Math.max(1000, deadline - Date.now()));
    if (r.ok) return { ok: true, url };
    reason = r.reason;
    if (r.final) break;
    if (r.next !== undefined && redirects++ < MAX_REDIRECTS) {
      next = r.next;
      continue;
    }
    redirects = 0;
    await new Promise((res) => setTimeout(res, pause));
    pause = Math.min(2000, pause * 2);
  }
  return { ok: false, reason };
}

/** What resuming needs of the client's connection. */
export interface ResumeLink {
  /** Makes `ws` the connection; `first` is sent as soon as it is open. */
  use(ws: WebSocket, first: () => ClientMessage): void;
  /** Drops what was queued for the connection lost. */
  discard(): void;
}

/** A client's resume state: the token and the baseapps the server gave, where it is connected, the attempt under way. */
export class Resumer {
  /** The baseapp's client URL connected to (the one that last took the player). */
  url: string;
  #link: ResumeLink;
  /** The resume token the server gave last; single-use. */
  #token: string | null = null;
  /** The live baseapps' client URLs, as the server last listed them: where a lost connection may resume. */
  #baseUrls: string[] = [];
  /** Settles the attempt under way. */
  #wait: ((r: ResumeResult) => void) | null = null;
  /** Where the baseapp of the attempt under way said the player is (resumeElsewhere). */
  #at: { url: string; reason: string } | null = null;
  /** Set once the client closed: no resume after it. */
  #stopped = false;

  constructor(url: string, link: ResumeLink) {
    this.url = url;
    this.#link = link;
  }

  /** The resume token the server gave last (single-use, short-lived), or null before it came. */
  get token(): string | null {
    return this.#token;
  }

  /** True while an attempt is under way. */
  get resuming(): boolean {
    return this.#wait !== null;
  }

  /** The client closed: no resume after this. */
  stop(): void {
    this.#stopped = true;
  }

  /** Keeps the resume token the server gave (or the one to resume with). */
  noteToken(token: string): void {
    this.#token = token;
  }

  /** Keeps the live baseapps' client URLs the server listed. */
  noteBaseApps(urls: string[]): void {
    this.#baseUrls = urls;
  }

  /** The baseapp of the attempt under way said the player is at `url`. */
  noteElsewhere(url: string, reason: string): void {
    // Settled when the server closes the connection, which it does next.
    if (this.#wait) this.#at = { url, reason };
  }

  /** Ends the attempt under way with the server's answer (none under way: nothing). */
  settle(r: ResumeResult): void {
    const settle = this.#wait;
    this.#wait = null;
    settle?.(r);
  }

  /** Ends the attempt under way as its connection closed; false when none was under way. */
  closed(code: number, reason: string): boolean {
    if (!this.#wait) return false;
    const at = this.#at;
    this.#at = null;
    this.settle(
      at
        ? { ok: false, final: false, reason: at.reason, next: at.url }
        : { ok: false, final: false, reason: `closed: ${code} ${reason}` },
    );
    return true;
  }

  /** Whether a close with `code` is one to resume after: a lost connection, the client not closed, a token kept. */
  mayResume(code: number): boolean {
    return isLostConnection(code) && !this.#stopped && this.#token !== null;
  }

  /** Takes the player back on a baseapp of `opts.urls` with the token, after a lost connection (close `code`). */
  async afterLoss(
    opts: ResumeOptions,
    code: number,
  ): Promise<{ ok: true; url: string } | { ok: false; reason: string }> {
    // Unless told where: the baseapp connected to first (a dropped connection), then the others the server listed;
    // after its baseapp was fenced, the others first (its base was restored on one of them).
    const others = this.#baseUrls.filter((u) => u !== this.url);
    const urls = opts.urls?.length
      ? opts.urls
      : code === CloseCode.baseAppFenced
      ? [...others, this.url]
      : [this.url, ...others];
    const r = await retryResume({ ...opts, urls }, this.url, (url, ms) => this.#attempt(url, ms), () => this.#stopped);
    if (r.ok) this.url = r.url;
    return r;
  }

  /** Takes the player back on `url` with the token kept, going on to the baseapp it names (Client.resume). */
  async start(timeoutMs: number): Promise<ResumeResult> {
    let r = await this.#attempt(this.url, timeoutMs);
    // Sent on to the baseapp holding the player: once, then again only if that one says so too.
    for (let hops = 0; !r.ok && r.next !== undefined && hops < 2; hops++) {
      this.url = r.next;
      r = await this.#attempt(r.next, timeoutMs);
    }
    return r;
  }

  /** One resume attempt on the baseapp at `url`. */
  #attempt(url: string, timeoutMs: number): Promise<ResumeResult> {
    const token = this.#token!;
    // What was queued for the lost connection is stale (moves from before): the server starts afresh.
    this.#link.discard();
    this.#at = null;
    return new Promise<ResumeResult>((resolve) => {
      const timer = setTimeout(() => {
        try {
          ws.close(1000, "no resume reply");
        } catch { /* already closed */ }
      }, Math.min(timeoutMs, 10_000));
      this.#wait = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
      const ws = new WebSocket(url);
      this.#link.use(ws, () => ({ id: C2S.resume, token }));
    });
  }
}
