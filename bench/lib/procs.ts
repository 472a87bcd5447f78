/**
 * Process figures from Linux /proc for benchmarks: CPU seconds (utime + stime,
 * the way the Colyseus peer harness reads its server), resident memory, and
 * the processes a cluster's parent started.
 */

/** Clock ticks per second in /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) `pid` has used; null once it is gone. */
export function cpuSeconds(pid: number): number | null {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[11]) + Number(f[12])) / USER_HZ;
  } catch {
    return null;
  }
}

/** Resident memory of `pid` in MB (VmRSS); 0 once it is gone. */
export function rssMB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(Deno.readTextFileSync(`/proc/${pid}/status`));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** `root` and every process descended from it, from the parent pids in /proc. */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const e of Deno.readDirSync("/proc")) {
    const pid = Number(e.name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
      parent.set(pid, Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // exited while listed
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, ppid] of parent) if (ppid === tree[i] && !tree.includes(pid)) tree.push(pid);
  }
  return tree;
}

/** CPU used by a set of processes over a window, and their summed resident memory's peak. */
export class ProcessWindow {
  readonly #start = new Map<number, number | null>();
  #t0 = 0;
  #peakRss = 0;
  readonly #peakByPid = new Map<number, number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly pids: number[]) {}

  /** Starts the window: CPU now, and RSS sampled every second (as the peer harness does). */
  begin(): void {
    this.#t0 = performance.now();
    for (const p of this.pids) this.#start.set(p, cpuSeconds(p));
    this.#sampleRss();
    this.#timer = setInterval(() => this.#sampleRss(), 1000);
  }

  /** Ends the window: per pid, the share of one core it used (null if it vanished). */
  end(): { seconds: number; cores: Map<number, number | null>; peakRssMB: number; peakRssByPid: Map<number, number> } {
    clearInterval(this.#timer);
    this.#sampleRss();
    const seconds = (performance.now() - this.#t0) / 1000;
    const cores = new Map<number, number | null>();
    for (const p of this.pids) {
      const a = this.#start.get(p), b = cpuSeconds(p);
      cores.set(p, a === null || a === undefined || b === null ? null : (b - a) / seconds);
    }
    return { seconds, cores, peakRssMB: this.#peakRss, peakRssByPid: new Map(this.#peakByPid) };
  }

  #sampleRss(): void {
    let sum = 0;
    for (const p of this.pids) {
      const mb = rssMB(p);
      sum += mb;
      this.#peakByPid.set(p, Math.max(this.#peakByPid.get(p) ?? 0, mb));
    }
    this.#peakRss = Math.max(this.#peakRss, sum);
  }
}

/** CPU seconds the whole machine has been busy (all cores: /proc/stat's first line, idle and iowait left out). */
export function machineBusySeconds(): number {
  const f = Deno.readTextFileSync("/proc/stat").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0)) / USER_HZ;
}

/** CPU seconds of this process and of its children it has waited for (utime, stime, cutime, cstime). */
export function selfAndReapedSeconds(): number {
  const stat = Deno.readTextFileSync(`/proc/${Deno.pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / USER_HZ;
}
