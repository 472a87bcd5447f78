/**
 * What the watch socket's topics carry, each gathered once however many
 * watch it: `cluster` (processes joining, leaving, dead, restarted, and every
 * process's load each second), `space:ID` (its cells and partitions when they
 * change, each cell's load each second, entity positions sampled at most 5
 * times a second, or counts per square for a crowded cell) and `entity:ID`
 * (its position, cellapp, ghosts and cell properties when they change).
 */
import { errorText } from "../core/errors.ts";
import {
  type CellEntityView,
  type ClusterView,
  type EntityInspectView,
  type ProcessChange,
  RequestError,
  type SpaceView,
} from "../core/views.ts";
import type { Watcher } from "./watcher.ts";

/** What the watch socket needs of the cellappmgr (a part of AdminBackend). */
export interface WatchSource {
  cluster(): ClusterView;
  getSpace(id: number): SpaceView;
  getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]>;
  inspectEntity(id: number): Promise<EntityInspectView>;
  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void;
}

/** How feeds are paced: the watch options (`WatchOptions`) a feed reads, all resolved. */
export interface FeedPacing {
  /** How often positions and entities are sampled (ms). */
  readonly sampleMs: number;
  /** How often loads are sent (ms). */
  readonly loadMs: number;
  /** Reals in a cell past which its entities are sent as counts per square. */
  readonly denseCell: number;
}

/** What a feed needs of the hub. */
export interface FeedHost {
  readonly source: WatchSource;
  readonly opts: FeedPacing;
  /** Sends to the feed's watchers (or `only` one); true when every one it was for got it. */
  publish(feed: Feed, msg: Record<string, unknown>, only?: Watcher): boolean;
  /** Ends the topic for its watchers, telling them why. */
  endTopic(feed: Feed, why: string): void;
}

/** One topic being gathered. */
export interface Feed {
  readonly topic: string;
  readonly watchers: Set<Watcher>;
  /** A watcher joined: it gets the current state (now or with the next sample). */
  welcome(w: Watcher): void;
  stop(): void;
}

/** Squares per side of a crowded cell's counts. */
const GRID = 32;
/** How often a crowded cellapp's entities are listed (ms). */
const DENSE_MS = 1000;
/** How long an entity that is gone is looked for between tries (ms). */
const GONE_MS = 1000;

/** Opens the feed of a topic (parsed by the hub); rejects, naming it, when the space or entity does not exist. */
export async function openFeed(host: FeedHost, topic: string): Promise<Feed> {
  if (topic === "cluster") return new ClusterFeed(host);
  const [kind, n] = topic.split(":");
  const id = Number(n);
  if (kind === "space") {
    host.source.getSpace(id);
    return new SpaceFeed(host, topic, id);
  }
  const first = await host.source.inspectEntity(id);
  return new EntityFeed(host, topic, id, first);
}

/** Runs `step` now and then again `ms` after each one starts (or after what it returns), until stopped. */
class Loop {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(ms: number, step: () => Promise<number | void> | number | void, firstAfterMs = 0) {
    const run = async () => {
      const start = performance.now();
      let next: number | void = undefined;
      try {
        next = await step();
      } catch (e) {
        console.error(`admin watch: a sample failed: ${errorText(e, { stack: true })}`);
      }
      if (this.#stopped) return;
      this.#timer = setTimeout(run, Math.max(0, (next ?? ms) - (performance.now() - start)));
    };
    this.#timer = setTimeout(run, firstAfterMs);
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }
}

/**
 * Sends a state (`msg`, told apart from others by `key`) to each watcher of
 * `feed` that does not have it: it has not had this one, or it missed a message.
 */
function sendState(
  host: FeedHost,
  feed: Feed,
  sent: WeakMap<Watcher, string>,
  key: string,
  msg: Record<string, unknown>,
): void {
  for (const w of feed.watchers) {
    if (sent.get(w) === key && !w.stale.has(feed.topic)) continue;
    if (!host.publish(feed, msg, w)) continue;
    sent.set(w, key);
    w.stale.delete(feed.topic);
  }
}

/** The `cluster` topic. */
class ClusterFeed implements Feed {
  readonly topic = "cluster";
  readonly watchers: Set<Watcher> = new Set();
  #loop: Loop;
  #unlisten: () => void;
  /** Processes that left, by role and address, so one coming back there is told as restarted. */
  #left = new Map<string, { id: number; at: number }>();

  constructor(readonly host: FeedHost) {
    this.#unlisten = host.source.onProcessChange((c) => this.#changed(c));
    // Who subscribes gets the processes at once (welcome), then with everyone each `loadMs`.
    this.#loop = new Loop(host.opts.loadMs, () => {
      host.publish(this, this.#processes());
    }, host.opts.loadMs);
  }

  #processes(): Record<string, unknown> {
    return { type: "processes", t: Date.now(), processes: this.host.source.cluster().processes };
  }

  #changed(c: ProcessChange): void {
    const key = `${c.process.role}@${c.process.address}`;
    const now = Date.now();
    let event: string = c.event;
    let previous: number | undefined;
    if (c.event === "left") {
      // A stop says goodbye ("peer closed: <why>"); silence or a dropped connection is a death.
      if (!c.reason?.startsWith("peer closed:")) event = "dead";
      this.#left.set(key, { id: c.process.id, at: now });
      if (this.#left.size > 1000) this.#left.delete(this.#left.keys().next().value!);
    } else if (this.#left.has(key)) {
      event = "restarted";
      previous = this.#left.get(key)!.id;
      this.#left.delete(key);
    }
    this.host.publish(this, {
      type: "event",
      t: now,
      event,
      process: c.process,
      ...(c.reason === undefined ? {} : { reason: c.reason }),
      ...(previous === undefined ? {} : { previousId: previous }),
    });
  }

  welcome(w: Watcher): void {
    if (this.host.publish(this, this.#processes(), w)) w.stale.delete(this.topic);
  }

  stop(): void {
    this.#loop.stop();
    this.#unlisten();
  }
}

/** The `space:ID` topic. */
class SpaceFeed implements Feed {
  readonly watchers: Set<Watcher> = new Set();
  #loop: Loop;
  /** The geometry each watcher has. */
  #sent = new WeakMap<Watcher, string>();
  #lastLoad = 0;
  /** Each cellapp's latest listing of the space and when it was made. */
  #listings = new Map<number, { at: number; entities: CellEntityView[] }>();

  constructor(readonly host: FeedHost, readonly topic: string, readonly id: number) {
    this.#loop = new Loop(host.opts.sampleMs, () => this.#step());
  }

  async #step(): Promise<void> {
    let space: SpaceView;
    try {
      space = this.host.source.getSpace(this.id);
    } catch (e) {
      if (e instanceof RequestError && e.code === "not_found") {
        this.host.endTopic(this, `space ${this.id} is gone`);
        return;
      }
      throw e;
    }
    const geometry = {
      type: "geometry",
      bounds: space.bounds,
      isDefault: space.isDefault,
      cells: space.cells.map((c) => ({ id: c.id, cellapp: c.cellapp, rect: c.rect })),
      partitions: space.balance.partitions,
      balance: { enabled: space.balance.enabled, retiring: space.balance.retiring },
    };
    const key = JSON.stringify(geometry);
    const now = Date.now();
    const load = {
      type: "load",
      t: now,
      cells: space.cells.map((c) => ({
        id: c.id,
        cellapp: c.cellapp,
        load: c.load,
        reals: c.reals,
        ghosts: c.ghosts,
        tickRate: c.tickRate,
        tickMsP50: c.tickMsP50,
        tickMsP99: c.tickMsP99,
        offloadsIn: c.offloadsIn,
        offloadsOut: c.offloadsOut,
      })),
    };
    sendState(this.host, this, this.#sent, key, geometry);
    if (now - this.#lastLoad >= this.host.opts.loadMs) {
      this.#lastLoad = now;
      this.host.publish(this, load);
    }
    this.host.publish(this, await this.#entities(space, now));
  }

  /** The space's entities: points, or counts per square for a cell holding more than `denseCell` reals. */
  async #entities(space: SpaceView, now: number): Promise<Record<string, unknown>> {
    const dense = this.host.opts.denseCell;
    const apps = new Map<number, number>();
    for (const c of space.cells) apps.set(c.cellapp, (apps.get(c.cellapp) ?? 0) + c.reals);
    for (const app of this.#listings.keys()) if (!apps.has(app)) this.#listings.delete(app);
    await Promise.all([...apps].map(async ([app, reals]) => {
      const last = this.#listings.get(app);
      if (last && reals > dense && now - last.at < DENSE_MS) return;
      try {
        this.#listings.set(app, { at: now, entities: await this.host.source.getCell(app, this.id) });
      } catch {
        // Its cell is on the way to another cellapp, or the cellapp is gone: the next sample lists it again.
        this.#listings.delete(app);
      }
    }));
    const byCell = new Map<number, CellEntityView[]>();
    const ghosts: [number, number, number, number][] = [];
    for (const { entities } of this.#listings.values()) {
      for (const e of entities) {
        if (!e.real) {
          ghosts.push([e.id, round(e.position[0]), round(e.position[2]), e.cell]);
          continue;
        }
        let list = byCell.get(e.cell);
        if (!list) byCell.set(e.cell, list = []);
        list.push(e);
      }
    }
    const cells = space.cells.map((c) => {
      const list = byCell.get(c.id) ?? [];
      if (list.length <= dense) {
        return { id: c.id, cellapp: c.cellapp, count: list.length, points: list.map((e) => point(e)) };
      }
      return { id: c.id, cellapp: c.cellapp, count: list.length, grid: grid(c.rect, space.bounds, list) };
    });
    const shown = ghosts.length <= dense ? ghosts : [];
    return { type: "entities", t: now, cells, ghosts: shown, ghostCount: ghosts.length };
  }

  welcome(): void {
    // The next sample (within sampleMs) sends it the geometry, then the entities; loads come each `loadMs`.
  }

  stop(): void {
    this.#loop.stop();
  }
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}

function point(e: CellEntityView): [number, number, number] {
  return [e.id, round(e.position[0]), round(e.position[2])];
}

/** Counts of `list` per square of `GRID` × `GRID` over the cell's rect (clipped to the space: cells may be unbounded). */
function grid(
  rect: [number, number, number, number],
  bounds: [number, number, number, number],
  list: CellEntityView[],
): { rect: [number, number, number, number]; cols: number; rows: number; counts: number[] } {
  const r: [number, number, number, number] = [
    Math.max(rect[0], bounds[0]),
    Math.max(rect[1], bounds[1]),
    Math.min(rect[2], bounds[2]),
    Math.min(rect[3], bounds[3]),
  ];
  const counts = new Array<number>(GRID * GRID).fill(0);
  const w = (r[2] - r[0]) / GRID || 1;
  const h = (r[3] - r[1]) / GRID || 1;
  for (const e of list) {
    const col = Math.min(GRID - 1, Math.max(0, Math.floor((e.position[0] - r[0]) / w)));
    const row = Math.min(GRID - 1, Math.max(0, Math.floor((e.position[2] - r[1]) / h)));
    counts[row * GRID + col]++;
  }
  return { rect: r, cols: GRID, rows: GRID, counts };
}

/** The `entity:ID` topic. */
class EntityFeed implements Feed {
  readonly watchers: Set<Watcher> = new Set();
  #loop: Loop;
  #last: EntityInspectView | null;
  /** The state each watcher has. */
  #sent = new WeakMap<Watcher, string>();
  #gone = false;

  constructor(readonly host: FeedHost, readonly topic: string, readonly id: number, first: EntityInspectView) {
    this.#last = first;
    this.#loop = new Loop(host.opts.sampleMs, () => this.#step());
  }

  async #step(): Promise<number | void> {
    let view: EntityInspectView;
    try {
      view = await this.host.source.inspectEntity(this.id);
    } catch (e) {
      if (!(e instanceof RequestError)) throw e;
      // It moved between the two questions of a look: the next one finds it.
      if (e.code !== "not_found") return;
      if (!this.#gone) this.host.publish(this, { type: "gone", t: Date.now(), message: e.message });
      this.#gone = true;
      this.#last = null;
      this.#sent = new WeakMap();
      return GONE_MS;
    }
    this.#gone = false;
    this.#last = view;
    sendState(this.host, this, this.#sent, JSON.stringify(view), { type: "entity", t: Date.now(), entity: view });
  }

  welcome(): void {
    if (this.#last) {
      const view = this.#last;
      sendState(this.host, this, this.#sent, JSON.stringify(view), { type: "entity", t: Date.now(), entity: view });
    }
  }

  stop(): void {
    this.#loop.stop();
  }
}
