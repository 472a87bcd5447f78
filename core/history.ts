/**
 * The claim log: with --history=DIR each process appends to DIR/<role>-<pid>.jsonl what it claims to hold and
 * since when (an entity real here, a base here, an account checked out here) and when it stops, so that
 * tools/history/ can check a whole run afterwards: no entity real in two places at once, no account with two
 * bases at once, nothing lost across a fault. Off (and free) unless opened.
 *
 * One JSON object per line, `t` in wall-clock ms (performance.timeOrigin + performance.now(), one clock for
 * every process of a machine), `k` the kind:
 * - `open` {role, pid}: the log starts; `close`: the process exits (every claim it held ends).
 * - `real` {id, space, cell, g}: entity `id` acts as a real here from `t` (g: its hand-over epoch);
 *   `unreal` {id, why}: it stops acting here.
 * - `base` {id, account}: base `id` is held here (account: the player's account, "" for none; an account held
 *   here is checked out here); `unbase` {id, why}: it is not any more.
 * - `hold` / `unhold`: none of this process's reals act (a cellapp that stalled awaits the cellappmgr's word).
 * - `beat`: written at each flush (every FLUSH_MS): the process ran at `t`. A process killed without a `close`
 *   holds its claims until its last line; one that stops (SIGSTOP) leaves a gap in its beats.
 */
import { errorText } from "./errors.ts";

/** How often lines are appended to the file: what a process killed -9 may lose. */
export const HISTORY_FLUSH_MS = 100;

/**
 * A gap between two lines of one process longer than this means the process did not run in between (stopped or
 * frozen): nothing it holds acted. After such a gap the writer skips one beat, so that what a waking process does
 * first (a cellapp holding its reals back) is written before it is seen to run again.
 */
export const HISTORY_STALL_MS = 500;

/** One line of a claim log. */
export type HistoryRecord =
  | { t: number; k: "open"; role: string; pid: number }
  | { t: number; k: "close" | "beat" | "hold" | "unhold" }
  | { t: number; k: "real"; id: number; space: number; cell: number; g: number }
  | { t: number; k: "unreal"; id: number; why: string }
  | { t: number; k: "base"; id: number; account: string }
  | { t: number; k: "unbase"; id: number; why: string };

/** This process's claim log (module-wide, as the logger: the claims come from deep in cell/ and base/). */
export class HistoryLog {
  /** Whether claims are written: checked first by every hook. */
  on = false;
  #file = "";
  #lines: string[] = [];
  /** Entities real here now. */
  #reals = new Set<number>();
  /** Bases held here now. */
  #bases = new Set<number>();
  #held = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastFlush = 0;

  /** Starts the log of this process (`role`) in `dir`, created if missing; returns the file's path. */
  open(dir: string, role: string): string {
    Deno.mkdirSync(dir, { recursive: true });
    this.#file = `${dir}/${role}-${Deno.pid}.jsonl`;
    Deno.writeTextFileSync(this.#file, "");
    this.on = true;
    this.#write({ t: now(), k: "open", role, pid: Deno.pid });
    this.#lastFlush = performance.now();
    this.flush();
    const timer = setInterval(() => this.#beat(), HISTORY_FLUSH_MS);
    Deno.unrefTimer(timer);
    this.#timer = timer;
    globalThis.addEventListener("unload", () => this.close());
    return this.#file;
  }

  /** Entity `id` acts as a real here from now on. */
  real(id: number, space: number, cell: number, epoch: number): void {
    if (!this.on) return;
    this.#reals.add(id);
    this.#write({ t: now(), k: "real", id, space, cell, g: epoch });
  }

  /** Entity `id` stops acting as a real here (nothing is written if it was not real here). */
  unreal(id: number, why: string): void {
    if (!this.on || !this.#reals.delete(id)) return;
    this.#write({ t: now(), k: "unreal", id, why });
  }

  /** Base `id` (of the player of `account`, "" for none) is held here from now on. */
  base(id: number, account: string): void {
    if (!this.on) return;
    this.#bases.add(id);
    this.#write({ t: now(), k: "base", id, account });
  }

  /** Base `id` is not held here any more. */
  unbase(id: number, why: string): void {
    if (!this.on || !this.#bases.delete(id)) return;
    this.#write({ t: now(), k: "unbase", id, why });
  }

  /** Everything held here stops at once (the process was fenced: others hold it now). */
  dropAll(why: string): void {
    if (!this.on) return;
    for (const id of [...this.#reals]) this.unreal(id, why);
    for (const id of [...this.#bases]) this.unbase(id, why);
  }

  /** Whether this process's reals act: false while a stalled cellapp holds them back. */
  acting(yes: boolean): void {
    if (!this.on || this.#held === !yes) return;
    this.#held = !yes;
    this.#write({ t: now(), k: yes ? "unhold" : "hold" });
  }

  /** Appends the lines so far to the file. */
  flush(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.join("\n") + "\n";
    this.#lines = [];
    try {
      Deno.writeTextFileSync(this.#file, text, { append: true });
    } catch (e) {
      console.error(`history: cannot write ${this.#file}: ${errorText(e)}; the claim log stops`);
      this.on = false;
      clearInterval(this.#timer);
    }
  }

  /** Writes the `close` line and what is left; every claim ends with it. */
  close(): void {
    if (!this.on) return;
    this.#write({ t: now(), k: "close" });
    this.flush();
    this.on = false;
    clearInterval(this.#timer);
  }

  #beat(): void {
    const at = performance.now();
    const gap = at - this.#lastFlush;
    this.#lastFlush = at;
    if (gap <= HISTORY_STALL_MS) this.#write({ t: now(), k: "beat" });
    this.flush();
  }

  #write(r: HistoryRecord): void {
    this.#lines.push(JSON.stringify(r));
  }
}

function now(): number {
  return performance.timeOrigin + performance.now();
}

/** This process's claim log, opened by cli/roles.ts with --history. */
export const history: HistoryLog = new HistoryLog();
