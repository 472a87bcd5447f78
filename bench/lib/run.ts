/** What every benchmark's entry point needs: its number flags checked, figures formatted, its run bounded. */

/** The number flag `--name` given as `v`, or an error naming the flag and its range. */
export function numberFlag(name: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new Error(`--${name}: ${JSON.stringify(v)} is not in ${min}-${max}`);
  }
  return n;
}

/** A figure for a results table: grouped digits, `d` decimals and `unit`, or "n/a" when there is none. */
export function figure(v: number | null | undefined, d = 0, unit = ""): string {
  return v === null || v === undefined || !Number.isFinite(v)
    ? "n/a"
    : v.toLocaleString("en", { minimumFractionDigits: d, maximumFractionDigits: d }) + unit;
}

/**
 * Bounds a run: if it is not over after `ms`, the processes `pids()` names (those it started) are killed by pid
 * and this process exits 1. Returns what ends the watch once the run is over.
 */
export function giveUpAfter(bench: string, ms: number, pids: () => readonly number[]): () => void {
  const timer = setTimeout(() => {
    console.error(`${bench} bench: not done after ${Math.round(ms / 1000)} s; giving up`);
    for (const pid of pids()) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    Deno.exit(1);
  }, ms);
  return () => clearTimeout(timer);
}
