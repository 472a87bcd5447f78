/**
 * When and how the SDK takes its player back after a lost connection: which
 * closes count as lost (not said by the server), and the retry loop over the
 * baseapps' client URLs with a growing pause, until one takes the resume
 * token, one refuses it for good, or the time is up.
 */

import { CloseCode } from "../core/def/client_protocol.ts";

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
