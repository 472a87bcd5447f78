/**
 * Spaces on the cellappmgr (seed 003): creation on the best cellapps, the BSP
 * tree of cells, the shutdown flow, and the default space that never ends.
 */
import { type BspNode, buildBsp, cellIndexAt, type CellRect, cellRects, removeCell } from "../core/geo/bsp.ts";
import { type Rect, rectArea, rectFromArray, rectToArray } from "../core/geo/rect.ts";
import { CellMsg, type CellReport, type SpaceGeometry, type SpawnRequest } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";
import { RequestError } from "../core/views.ts";
import {
  SPACE_SETTINGS_DEFAULTS,
  type SpaceSettings,
  spaceSettingsError,
  spaceSettingsIn,
  type SpaceSettingsView,
} from "../core/space_settings.ts";

/** The id of the default space, as BigWorld's useDefaultSpace. */
export const DEFAULT_SPACE_ID = 1;

/** What to create a space with. */
export interface SpaceSpec {
  bounds: Rect;
  cells: number;
  /** Prefer cellapps on this host (seed 003's preferred IP). */
  preferredHost?: string | null;
  isDefault?: boolean;
  /** Entities to spawn once the cells exist. */
  entities?: { type: string; count: number; props?: Record<string, unknown> }[];
  /** Whether its partitions follow the load (default true). */
  balance?: boolean;
  /** Its own AoI and ghost radius (checked against the ghost rule). */
  settings?: SpaceSettings;
}

/** Loads are compared in steps of 1/LOAD_STEPS of a core. */
const LOAD_STEPS = 10;

/** A space as the cellappmgr knows it. */
export class Space {
  shuttingDown = false;
  hasHadEntities = false;
  /** Its only cellapp died: its tree still names that cell, which a new cell on a live cellapp replaces. */
  bare = false;
  /** A new cell is being made for it on a live cellapp. */
  placing = false;
  /** Whether its partitions follow the load (cells are added and retired); a drain goes on regardless. */
  balance = true;
  /** Balancing retires no idle cell below this many: the cells it was created with. */
  minCells = 1;
  /** Its own AoI and ghost radius; every cellapp of the space gets them with the geometry. */
  settings: SpaceSettings = {};
  readonly createdAt: number = Date.now();

  constructor(
    readonly id: number,
    readonly bounds: Rect,
    public tree: BspNode,
    readonly isDefault: boolean,
    readonly preferredHost: string | null,
  ) {}

  #cellsOf: { tree: BspNode; cells: CellRect[] } | null = null;

  /** The cells with their rects (worked out once per tree: a tree is never changed, only replaced). */
  cells(): CellRect[] {
    if (this.#cellsOf?.tree !== this.tree) {
      this.#cellsOf = { tree: this.tree, cells: cellRects(this.tree, this.bounds) };
    }
    return this.#cellsOf.cells;
  }

  /** The distinct cellapps running cells of the space, in tree order. */
  cellapps(): number[] {
    return [...new Set(this.cells().map((c) => c.cellapp))];
  }

  /** What every cellapp of the space is sent; `address` names each cellapp's listening address (once per cellapp). */
  geometry(address: (cellapp: number) => string | undefined = () => undefined): SpaceGeometry {
    const cellapps: [number, string][] = [];
    for (const id of this.cellapps()) {
      const a = address(id);
      if (a) cellapps.push([id, a]);
    }
    const g: SpaceGeometry = {
      spaceId: this.id,
      bounds: rectToArray(this.bounds),
      tree: this.tree,
      isDefault: this.isDefault,
      cellapps,
    };
    if (this.settings.aoiRadius !== undefined) g.aoiRadius = this.settings.aoiRadius;
    if (this.settings.ghostRadius !== undefined) g.ghostRadius = this.settings.ghostRadius;
    return g;
  }
}

/** Every space of the cluster. */
export class Spaces {
  readonly all: Map<number, Space> = new Map();
  /** Latest report per cell, keyed by `${spaceId}/${cellId}`. */
  readonly reports: Map<string, CellReport> = new Map();
  /** Cellapps being drained (POST /api/cellapps/:id/retire): no new cell goes to them. */
  readonly draining: Set<number> = new Set();
  /** Entities spawned into a cell since its last report, by the same key: counted until the report says them. */
  readonly #unreported = new Map<string, number>();
  #nextId = DEFAULT_SPACE_ID + 1;
  /** The cellapps' AoI and ghost radius (`--aoi-radius`, `--ghost-radius`): a space's unset settings are these. */
  settingsDefaults: SpaceSettingsView = SPACE_SETTINGS_DEFAULTS;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    /** Reserves `count` fresh entity ids as [start, end). */
    private readonly reserveIds: (count: number) => Promise<[number, number]>,
  ) {}

  /**
   * findBestCellApp, `n` times: the least loaded cellapps (fewest cells on a
   * tie), with those on the preferred host first when one is asked for.
   */
  findBestCellApps(n: number, preferredHost: string | null = null): Member[] {
    const cellsOf = new Map<number, number>();
    for (const s of this.all.values()) {
      for (const c of s.cells()) cellsOf.set(c.cellapp, (cellsOf.get(c.cellapp) ?? 0) + 1);
    }
    const score = (m: Member) => (preferredHost !== null && hostOf(m.address) === preferredHost ? 1 : 0);
    // Loads are measured CPU shares: ones within about 10 % of a core are noise, and the cell count decides.
    const level = (m: Member) => Math.floor(m.load * LOAD_STEPS);
    const apps = this.registry.withRole("cellapp");
    const staying = apps.filter((m) => !this.draining.has(m.id));
    return (staying.length > 0 ? staying : apps).sort((a, b) =>
      score(b) - score(a) || level(a) - level(b) || (cellsOf.get(a.id) ?? 0) - (cellsOf.get(b.id) ?? 0) ||
      a.id - b.id
    ).slice(0, n);
  }

  /** A space's geometry with the addresses of its cellapps. */
  geometryOf(space: Space): SpaceGeometry {
    return space.geometry((id) => this.registry.members.get(id)?.address);
  }

  /**
   * Creates a space: picks the least loaded cellapps, places the cells on
   * them round-robin (several cells on one cellapp when there are more cells
   * than cellapps), builds the tree, has each cellapp create its cells, then
   * spawns the entities asked for. The ids are reserved before anything is
   * made, and a failure removes what was made: the caller gets one error and
   * no half-filled space.
   */
  async create(spec: SpaceSpec): Promise<Space> {
    if (!(spec.cells >= 1)) throw new RequestError("bad_request", `cells: a space needs at least one cell`);
    const settings: SpaceSettings = {};
    if (spec.settings?.aoiRadius != null) settings.aoiRadius = spec.settings.aoiRadius;
    if (spec.settings?.ghostRadius != null) settings.ghostRadius = spec.settings.ghostRadius;
    const bad = spaceSettingsError("the new space", settings, spaceSettingsIn(settings, this.settingsDefaults));
    if (bad) throw new RequestError("bad_request", bad);
    const apps = this.findBestCellApps(spec.cells, spec.preferredHost ?? null);
    if (apps.length === 0) throw new RequestError("unavailable", "no cellapp is running to host the space");
    const entities = spec.entities ?? [];
    const total = entities.reduce((n, e) => n + e.count, 0);
    let ids: [number, number] = [0, 0];
    try {
      if (total > 0) ids = await this.reserveIds(total);
    } catch (e) {
      throw new RequestError("unavailable", `no entity ids for ${total} entities: ${(e as Error).message}`);
    }
    // A cellapp may have reported the default space while the ids were reserved: it is the one.
    if (spec.isDefault && this.all.has(DEFAULT_SPACE_ID)) {
      throw new RequestError("conflict", `the default space exists already (a cellapp reported it)`);
    }
    const placement = Array.from({ length: spec.cells }, (_, i) => apps[i % apps.length].id);
    const id = spec.isDefault ? DEFAULT_SPACE_ID : this.#nextId++;
    const space = new Space(
      id,
      spec.bounds,
      buildBsp(spec.bounds, placement),
      !!spec.isDefault,
      spec.preferredHost ?? null,
    );
    space.balance = spec.balance ?? true;
    space.minCells = spec.cells;
    space.settings = { ...settings };
    this.all.set(id, space);
    const geometry = this.geometryOf(space);
    const results = await Promise.allSettled(apps.map((a) => a.channel.request(CellMsg.createCell, geometry)));
    const failed = results.find((r) => r.status === "rejected");
    if (failed) {
      this.all.delete(id);
      // Undo only the cells that were made.
      results.forEach((r, i) => r.status === "fulfilled" && apps[i].channel.send(CellMsg.shutDownSpace, id));
      throw new RequestError(
        "unavailable",
        `creating the cells of space ${id} failed: ${(failed as PromiseRejectedResult).reason?.message}`,
      );
    }
    this.log.info(`space ${id} created: ${spec.cells} cell(s) on cellapp(s) ${placement.join(", ")}`, { space: id });
    let next = ids[0];
    try {
      for (const e of entities) {
        await this.#spawnWithIds(space, e.type, e.count, [next, next + e.count - 1], e.props);
        next += e.count;
      }
    } catch (e) {
      const why = `spawning the entities of space ${id} failed: ${(e as Error).message}`;
      if (space.isDefault) {
        this.log.error(`${why}; the default space stays with what was made`);
        return space;
      }
      this.shutDown(id, why);
      throw new RequestError("unavailable", `${why}; the space was removed`);
    }
    return space;
  }

  /**
   * Spawns `count` entities into a live space: all at `position` (in the cell
   * that covers it) when one is given, else spread over its cells by area.
   * Resolves with how many were made.
   */
  async spawn(
    space: Space,
    type: string,
    count: number,
    props?: Record<string, unknown>,
    position?: [number, number, number],
  ): Promise<number> {
    let ids: [number, number];
    try {
      const [start, end] = await this.reserveIds(count);
      ids = [start, end - 1];
    } catch (e) {
      throw new RequestError("unavailable", `no entity ids for ${count} entities: ${(e as Error).message}`);
    }
    await this.placed(space);
    if (!position) return await this.#spawnWithIds(space, type, count, ids, props);
    const cell = space.cells()[cellIndexAt(space.tree, position[0], position[2])];
    const m = this.registry.members.get(cell.cellapp);
    if (!m) throw new RequestError("unavailable", `the cellapp ${cell.cellapp} of cell ${cell.id} is gone`);
    const request: SpawnRequest = { spaceId: space.id, cellId: cell.id, type, count, props, position, ids };
    const made = await m.channel.request(CellMsg.spawn, request);
    const key = `${space.id}/${cell.id}`;
    this.#unreported.set(key, (this.#unreported.get(key) ?? 0) + made);
    space.hasHadEntities = true;
    return made;
  }

  /** Spreads `count` entities over the space's cells by area, with the ids `ids` ([first, last]). */
  async #spawnWithIds(
    space: Space,
    type: string,
    count: number,
    ids: [number, number],
    props?: Record<string, unknown>,
  ): Promise<number> {
    const cells = space.cells();
    const total = cells.reduce((s, c) => s + rectArea(c.rect), 0);
    let left = count;
    let first = ids[0];
    const jobs: Promise<number>[] = [];
    cells.forEach((c, i) => {
      const n = i === cells.length - 1 ? left : Math.round((count * rectArea(c.rect)) / total);
      left -= n;
      if (n <= 0) return;
      const m = this.registry.members.get(c.cellapp);
      if (!m) {
        jobs.push(Promise.reject(new Error(`the cellapp ${c.cellapp} of cell ${c.id} is gone`)));
        return;
      }
      const request = { spaceId: space.id, cellId: c.id, type, count: n, props, ids: [first, first + n - 1] };
      const key = `${space.id}/${c.id}`;
      // The cell's next report comes after this reply on the same channel, so it counts them.
      jobs.push(
        m.channel.request(CellMsg.spawn, request as SpawnRequest).then((made) => {
          this.#unreported.set(key, (this.#unreported.get(key) ?? 0) + made);
          return made;
        }),
      );
      first += n;
    });
    const made = await Promise.allSettled(jobs);
    const failed = made.find((r) => r.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    space.hasHadEntities = true;
    return count;
  }

  /**
   * Shuts a space down (seed 003): every cellapp of the space is told, and the
   * space is forgotten here at once; repeated requests are ignored.
   */
  shutDown(id: number, why: string): void {
    const space = this.all.get(id);
    if (!space) throw new RequestError("not_found", `no space ${id}`);
    if (space.isDefault) throw new RequestError("conflict", `space ${id} is the default space, which never shuts down`);
    if (space.shuttingDown) return;
    space.shuttingDown = true;
    this.log.info(`space ${id} shutting down: ${why}`);
    for (const a of space.cellapps()) this.registry.members.get(a)?.channel.send(CellMsg.shutDownSpace, id);
    this.all.delete(id);
    for (const c of space.cells()) {
      this.reports.delete(`${id}/${c.id}`);
      this.#unreported.delete(`${id}/${c.id}`);
    }
  }

  /** Real entities in every space: as the cells last reported them, and those spawned since. */
  entityCount(): number {
    let n = 0;
    for (const r of this.reports.values()) n += r.reals;
    for (const u of this.#unreported.values()) n += u;
    return n;
  }

  /** Records a cellapp's per-cell figures (of the cells the tree still gives it). */
  report(cellapp: number, cells: readonly CellReport[]): void {
    for (const c of cells) {
      const space = this.all.get(c.spaceId);
      if (!space || !space.cells().some((s) => s.id === c.cellId && s.cellapp === cellapp)) continue;
      if (c.reals > 0 || c.hadEntities) space.hasHadEntities = true;
      this.reports.set(`${c.spaceId}/${c.cellId}`, c);
      this.#unreported.delete(`${c.spaceId}/${c.cellId}`);
    }
  }

  /**
   * Adopts the spaces a (re-)registering cellapp runs (after a cellappmgr
   * restart). A claim on a space known here with the same geometry is one
   * more cellapp of it; a claim whose tree gives the cellapp no cell, or on
   * a space id known here with another geometry, cannot stand: the space
   * known first stays. Returns those refused claims, with why.
   */
  adopt(cellapp: number, geometries: readonly SpaceGeometry[]): { spaceId: number; why: string }[] {
    const refused: { spaceId: number; why: string }[] = [];
    for (const g of geometries) {
      const bounds = rectFromArray(g.bounds);
      const name = `space ${g.spaceId}${g.isDefault ? " (default)" : ""}`;
      if (g.isDefault !== (g.spaceId === DEFAULT_SPACE_ID)) {
        refused.push({ spaceId: g.spaceId, why: `claims ${name}, but the default space is space ${DEFAULT_SPACE_ID}` });
        continue;
      }
      // Even a refused claim's id stays unused here: its cells live on until they have shut down.
      this.#nextId = Math.max(this.#nextId, g.spaceId + 1);
      if (!cellRects(g.tree, bounds).some((c) => c.cellapp === cellapp)) {
        refused.push({ spaceId: g.spaceId, why: `claims ${name}, whose tree gives it no cell` });
        continue;
      }
      const known = this.all.get(g.spaceId);
      if (known) {
        const same = known.isDefault === g.isDefault && JSON.stringify(rectToArray(known.bounds)) ===
            JSON.stringify(g.bounds) &&
          JSON.stringify(known.tree) === JSON.stringify(g.tree);
        if (!same) {
          refused.push({
            spaceId: g.spaceId,
            why: `claims ${name}, which this cellappmgr already runs on cellapp(s) ${
              known.cellapps().join(", ")
            } with another geometry (the space known first stays)`,
          });
        }
        continue;
      }
      const space = new Space(g.spaceId, bounds, g.tree, g.isDefault, null);
      space.hasHadEntities = true;
      if (g.aoiRadius != null) space.settings.aoiRadius = g.aoiRadius;
      if (g.ghostRadius != null) space.settings.ghostRadius = g.ghostRadius;
      this.all.set(g.spaceId, space);
      this.log.info(`${name} adopted from cellapp ${cellapp}`);
    }
    return refused;
  }

  /** A space's settings in force. */
  settingsOf(space: Space): SpaceSettingsView {
    return spaceSettingsIn(space.settings, this.settingsDefaults);
  }

  /**
   * Changes a space's settings (admin API or script): the result must keep the ghost rule, else a RequestError
   * says which value breaks it. Every cellapp of the space hears the new geometry; cells added later get it too.
   */
  setSettings(space: Space, change: SpaceSettings): SpaceSettingsView {
    const own = { ...space.settings }, given: SpaceSettings = {};
    if (change.aoiRadius != null) own.aoiRadius = given.aoiRadius = change.aoiRadius;
    if (change.ghostRadius != null) own.ghostRadius = given.ghostRadius = change.ghostRadius;
    const merged = spaceSettingsIn(own, this.settingsDefaults);
    const bad = spaceSettingsError(`space ${space.id}`, given, merged);
    if (bad) throw new RequestError("bad_request", bad);
    if (own.aoiRadius === space.settings.aoiRadius && own.ghostRadius === space.settings.ghostRadius) return merged;
    space.settings = own;
    const g = this.geometryOf(space);
    for (const a of space.cellapps()) this.registry.members.get(a)?.channel.send(CellMsg.updateGeometry, g);
    this.log.info(`space ${space.id}: AoI radius ${merged.aoiRadius} m, ghost radius ${merged.ghostRadius} m`);
    return merged;
  }

  /**
   * A cellapp is gone: all its cells go with it. Each is taken out of its
   * space's tree (removeCell): only its neighbours across the partition grow,
   * the other cells keep their rects. A space that lost its only cell keeps
   * its id and its (dead) leaf, marked bare, until giveCellsToBareSpaces puts
   * a new cell on a live cellapp. Returns the spaces left bare.
   */
  onCellAppLeft(cellapp: number): Space[] {
    const bare: Space[] = [];
    for (const space of [...this.all.values()]) {
      const gone = space.cells().filter((c) => c.cellapp === cellapp);
      if (gone.length === 0) continue;
      for (const c of gone) {
        this.reports.delete(`${space.id}/${c.id}`);
        this.#unreported.delete(`${space.id}/${c.id}`);
      }
      let tree: BspNode | null = space.tree;
      for (const c of gone) tree = tree && removeCell(tree, c.id);
      if (tree === null) {
        space.bare = true;
        bare.push(space);
        this.log.warn(`space ${space.id} lost its only cellapp ${cellapp}; it gets a new cell on a live cellapp`);
        continue;
      }
      space.tree = tree;
      const g = this.geometryOf(space);
      for (const a of space.cellapps()) this.registry.members.get(a)?.channel.send(CellMsg.updateGeometry, g);
      this.log.warn(
        `space ${space.id} lost ${gone.length} cell(s) with cellapp ${cellapp}; their neighbours took their area`,
      );
    }
    return bare;
  }

  /**
   * Gives a space a new tree (load balancing moved a partition, added or
   * removed a cell). A cellapp new to the space makes its cell first, so that
   * no neighbour sends it a ghost or an entity before the cell exists; then
   * every cellapp that runs or ran a cell of the space hears the new
   * geometry (a cellapp whose cell left the tree hands its last entities
   * over and drops the cell).
   */
  async setTree(space: Space, tree: BspNode): Promise<void> {
    const before = space.cellapps();
    space.tree = tree;
    const after = space.cellapps();
    const fresh = after.filter((a) => !before.includes(a));
    const g = this.geometryOf(space);
    let failed: Error | null = null;
    if (fresh.length > 0) {
      space.placing = true;
      const made = await Promise.allSettled(fresh.map((a) => {
        const m = this.registry.members.get(a);
        if (!m) throw new Error(`cellapp ${a} is gone`);
        return m.channel.request(CellMsg.createCell, g);
      }));
      space.placing = false;
      if (this.all.get(space.id) !== space || space.tree !== tree) return;
      // A cell that could not be made leaves the tree again (its zero-width leaf or, when it grew, its area goes back).
      made.forEach((r, i) => {
        if (r.status === "fulfilled") return;
        failed = r.reason as Error;
        for (const c of space.cells()) {
          if (c.cellapp === fresh[i]) space.tree = removeCell(space.tree, c.id) ?? space.tree;
        }
      });
    }
    const geometry = space.tree === tree ? g : this.geometryOf(space);
    const now = space.cellapps();
    for (const a of new Set([...before, ...now])) {
      // A new cellapp made its cell from this geometry already.
      if (fresh.includes(a) && geometry === g) continue;
      this.registry.members.get(a)?.channel.send(CellMsg.updateGeometry, geometry);
    }
    for (const c of before) if (!now.includes(c)) this.log.info(`space ${space.id} no longer uses cellapp ${c}`);
    if (failed) throw new Error(`a new cell of space ${space.id} could not be made: ${(failed as Error).message}`);
  }

  /**
   * Seed 004: every space keeps at least one cell. Each bare space (see
   * onCellAppLeft) gets one new cell covering it, with a fresh cell id, on
   * the least loaded live cellapp; with no cellapp alive it stays bare until
   * one registers (call again then). Resolves once the cellapps answered; a
   * failure is logged and leaves the space bare for the next call.
   */
  async giveCellsToBareSpaces(): Promise<void> {
    const jobs: Promise<void>[] = [];
    for (const space of this.all.values()) {
      if (!space.bare || space.placing) continue;
      const [app] = this.findBestCellApps(1, space.preferredHost);
      if (!app) {
        this.log.warn(`space ${space.id} has no cell: no cellapp is alive to run one`);
        continue;
      }
      const id = Math.max(...space.cells().map((c) => c.id)) + 1;
      space.tree = { cell: { id, cellapp: app.id } };
      space.bare = false;
      space.placing = true;
      jobs.push(
        app.channel.request(CellMsg.createCell, this.geometryOf(space)).then(
          () => {
            space.placing = false;
            this.log.info(`space ${space.id} has a new cell ${id} on cellapp ${app.id}`);
          },
          (e) => {
            space.placing = false;
            if (this.all.get(space.id) !== space) return;
            space.bare = true;
            this.log.error(
              `space ${space.id}: creating its new cell ${id} on cellapp ${app.id} failed: ${(e as Error).message}`,
            );
            // That cellapp died meanwhile: try the next one now. One that refused is tried when a cellapp joins or leaves.
            if (!this.registry.members.has(app.id)) return this.giveCellsToBareSpaces();
          },
        ),
      );
    }
    await Promise.all(jobs);
  }

  /**
   * Resolves once `space` has a cell on a live cellapp again (placing one now if it is bare), or after `ms`: a
   * restore or a login that arrives while its space lost its only cell waits for the new one rather than failing.
   */
  async placed(space: Space, ms: number = PLACE_WAIT_MS): Promise<void> {
    const end = performance.now() + ms;
    while ((space.bare || space.placing) && this.all.get(space.id) === space && performance.now() < end) {
      if (space.bare && !space.placing) await this.giveCellsToBareSpaces();
      if (space.bare || space.placing) await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** How long a request for a space that lost its only cell waits for the new one. */
export const PLACE_WAIT_MS = 5000;

function hostOf(address: string): string {
  return address.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
}
