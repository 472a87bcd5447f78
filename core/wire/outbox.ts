/**
 * Tick batching: messages written while a tick runs are flushed together when
 * it ends ("bundles"); outside a tick they flush at the end of the current
 * JavaScript turn. The batching state is process scratch (core/scratch.ts).
 */
import { type Flushable, scratch } from "../scratch.ts";

export type { Flushable } from "../scratch.ts";

const outbox = scratch.outbox;

/** True while a tick is running, so writes wait for its end. */
export function inTick(): boolean {
  return outbox.depth > 0;
}

/** Marks `f` to be flushed at the end of the running tick. */
export function deferFlush(f: Flushable): void {
  outbox.dirty.push(f);
}

/** Starts a tick: writes from now on are held until `endTick`. */
export function beginTick(): void {
  outbox.depth++;
}

/** Ends a tick and flushes every channel written during it. */
export function endTick(): void {
  if (outbox.depth === 0) throw new Error("endTick without beginTick");
  if (--outbox.depth > 0) return;
  // A flush can start a write that schedules nothing here, so one pass suffices.
  const dirty = outbox.dirty;
  for (let i = 0; i < dirty.length; i++) dirty[i].flush();
  dirty.length = 0;
}

/**
 * Runs `body` as one tick: what it sends goes out together at the end, in
 * one write per channel unless a channel passed its flush threshold sooner.
 */
export function tick<T>(body: () => T): T {
  beginTick();
  try {
    return body();
  } finally {
    endTick();
  }
}
