/**
 * Tick batching: messages written while a tick runs are flushed together when
 * it ends ("bundles"); outside a tick they flush at the end of the current
 * JavaScript turn.
 */

/** Something with buffered writes to flush. */
export interface Flushable {
  flush(): void;
}

let depth = 0;
const dirty: Flushable[] = [];

/** True while a tick is running, so writes wait for its end. */
export function inTick(): boolean {
  return depth > 0;
}

/** Marks `f` to be flushed at the end of the running tick. */
export function deferFlush(f: Flushable): void {
  dirty.push(f);
}

/** Starts a tick: writes from now on are held until `endTick`. */
export function beginTick(): void {
  depth++;
}

/** Ends a tick and flushes every channel written during it. */
export function endTick(): void {
  if (depth === 0) throw new Error("endTick without beginTick");
  if (--depth > 0) return;
  // A flush can start a write that schedules nothing here, so one pass suffices.
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
