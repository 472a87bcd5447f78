/**
 * What the chaos benchmark sees through the admin API: polls /api/cluster and
 * each cellapp's entities in one space, and keeps, per entity id, where it is
 * real; from that, per fault, when the cellappmgr noticed it, when each entity
 * the fault took was real again, and which ids were real on two cellapps.
 */
import type { CellEntityView, ClusterView } from "../../core/views.ts";

/** One poll's result: real ids to the cellapps listing them, or null when the cellappmgr did not answer. */
interface Poll {
  t: number;
  cluster: ClusterView | null;
  reals: Map<number, number[]>;
}

const QUERY_MS = 1000;

async function getJson<T>(url: string, headers: Record<string, string>): Promise<T | null> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(QUERY_MS) });
    if (!res.ok) {
      await res.body?.cancel();
      return null;
    }
    return await res.json() as T;
  } catch {
    // Not answering is what this watcher measures (a dead or stopped process); the caller sees null.
    return null;
  }
}

/** Polls the admin API until stopped; answers questions about what it saw. */
export class EntityWatch {
  /** The latest poll. */
  last: Poll | null = null;
  /** Ids seen real on two cellapps in two polls in a row (a handover in flight shows in one at most). */
  readonly doubled = new Set<number>();
  /** Per id, the time it was last seen real and where. */
  readonly seen = new Map<number, { t: number; cellapp: number }>();
  readonly #twice = new Set<number>();
  #listeners: ((p: Poll) => void)[] = [];
  #running = true;
  readonly done: Promise<void>;

  /** `headers` go with every request (an admin token). */
  constructor(
    readonly admin: string,
    readonly spaceId: number,
    readonly everyMs: number,
    readonly headers: Record<string, string> = {},
  ) {
    this.done = this.#loop();
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const started = performance.now();
      const p = await this.#poll();
      this.last = p;
      for (const l of this.#listeners) l(p);
      const wait = this.everyMs - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }

  async #poll(): Promise<Poll> {
    const t = performance.now();
    const cluster = await getJson<ClusterView>(`${this.admin}/api/cluster`, this.headers);
    const reals = new Map<number, number[]>();
    if (!cluster) return { t, cluster, reals };
    const apps = cluster.processes.filter((p) => p.role === "cellapp").map((p) => p.id);
    const lists = await Promise.all(
      apps.map((a) =>
        getJson<{ entities: CellEntityView[] }>(`${this.admin}/api/cellapps/${a}/cells/${this.spaceId}`, this.headers)
      ),
    );
    const now = performance.now();
    const twice = new Set<number>();
    lists.forEach((l, i) => {
      for (const e of l?.entities ?? []) {
        if (!e.real) continue;
        const at = reals.get(e.id);
        if (at) {
          at.push(apps[i]);
          twice.add(e.id);
          if (this.#twice.has(e.id)) this.doubled.add(e.id);
        } else reals.set(e.id, [apps[i]]);
        this.seen.set(e.id, { t: now, cellapp: apps[i] });
      }
    });
    this.#twice.clear();
    for (const id of twice) this.#twice.add(id);
    return { t, cluster, reals };
  }

  /** Resolves with the first poll (from now on) for which `cond` holds, or null after `ms`. */
  until(cond: (p: Poll) => boolean, ms: number): Promise<Poll | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#listeners = this.#listeners.filter((l) => l !== check);
        resolve(null);
      }, ms);
      const check = (p: Poll) => {
        if (!cond(p)) return;
        clearTimeout(timer);
        this.#listeners = this.#listeners.filter((l) => l !== check);
        resolve(p);
      };
      this.#listeners.push(check);
    });
  }

  /** Calls `fn` with every poll until the returned function is called. */
  onPoll(fn: (p: Poll) => void): () => void {
    this.#listeners.push(fn);
    return () => {
      this.#listeners = this.#listeners.filter((l) => l !== fn);
    };
  }

  /** Stops polling and waits for the poll under way. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.done;
  }
}

export type { Poll };
