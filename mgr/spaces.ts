/**
 * The spaces of the cluster on the cellappmgr (docs/architecture.md, "Spaces and cells"): creation on the best
 * cellapps, spawning into them, their settings, the shutdown flow, and what
 * their cells report. Tree changes are tree_changes.ts; the space itself is space.ts.
 */
import { errorText } from "../core/errors.ts";
import {
  type BspNode,
  buildBsp,
  cellIndexAt,
  cellRects,
  type Rect,
  rectArea,
  rectFromArray,
  rectToArray,
} from "../core/geo/mod.ts";
import { CellMsg, type CellReport, type SpaceGeometry, type SpawnRequest } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";
import { RequestError } from "../core/views.ts";
import type { SpaceGeometryHook } from "../core/game.ts";
import {
  navGeometryError,
  SPACE_SETTINGS_DEFAULTS,
  type SpaceSettings,
  spaceSettingsError,
  spaceSettingsIn,
  type SpaceSettingsView,
} from "../core/space_settings.ts";
import { DEFAULT_SPACE_ID, Space } from "./space.ts";
import { bestCellApps } from "./cell_placement.ts";
import { dropCellApp, giveCellsToBareSpaces, PLACE_WAIT_MS, placed, setTree, type TreeHost } from "./tree_changes.ts";

/** What to create a space with. */
export interface SpaceSpec {
  bounds: Rect;
  cells: number;
  /** Prefer cellapps on this host (BigWorld's preferred IP). */
  preferredHost?: string | null;
  isDefault?: boolean;
  /** Entities to spawn once the cells exist. */
  entities?: { type: string; count: number; props?: Record<string, unknown> }[];
  /** Whether its partitions follow the load (default true). */
  balance?: boolean;
  /** Its own AoI and ghost radius (checked against the ghost rule). */
  settings?: SpaceSettings;
  /** The file its navigation mesh is made from (cell/nav/); absent: the game's spaceGeometry hook says. */
  geometry?: string;
  /** Shut it down once it had entities and all its cells are empty (Space.shutDownWhenEmpty). */
  shutDownWhenEmpty?: boolean;
}

/** Reports each cellapp of an emptied multi-cell space sends before it shuts: the first may predate the last move. */
const EMPTY_REPORTS = 2;

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
  /** The game's say on a new space's navigation geometry (core/game.ts SpaceGeometryHook). */
  geometryHook: SpaceGeometryHook | null = null;
  /** What the tree changes (tree_changes.ts) see of this table. */
  readonly #trees: TreeHost;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    /** Reserves `count` fresh entity ids as [start, end). */
    private readonly reserveIds: (count: number) => Promise<[number, number]>,
  ) {
    this.#trees = {
      all: this.all,
      members: registry.members,
      log,
      geometryOf: (space) => this.geometryOf(space),
      forgetCell: (spaceId, cellId) => this.#forgetCell(spaceId, cellId),
      findBestCellApps: (n, preferredHost) => this.findBestCellApps(n, preferredHost),
    };
  }

  /**
   * findBestCellApp, `n` times: the least loaded cellapps (fewest cells on a
   * tie), with those on the preferred host first when one is asked for.
   */
  findBestCellApps(n: number, preferredHost: string | null = null): Member[] {
    return bestCellApps(this.all.values(), this.registry.withRole("cellapp"), this.draining, n, preferredHost);
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
    const navGeometry = this.#navGeometryOf(spec);
    const apps = this.findBestCellApps(spec.cells, spec.preferredHost ?? null);
    if (apps.length === 0) throw new RequestError("unavailable", "no cellapp is running to host the space");
    const entities = spec.entities ?? [];
    const total = entities.reduce((n, e) => n + e.count, 0);
    let ids: [number, number] = [0, 0];
    try {
      if (total > 0) ids = await this.reserveIds(total);
    } catch (e) {
      throw new RequestError("unavailable", `no entity ids for ${total} entities: ${errorText(e)}`, { cause: e });
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
    space.shutDownWhenEmpty = spec.shutDownWhenEmpty ?? false;
    space.settings = { ...settings };
    space.navGeometry = navGeometry;
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
      const why = `spawning the entities of space ${id} failed: ${errorText(e)}`;
      if (space.isDefault) {
        this.log.error(`${why}; the default space stays with what was made`);
        return space;
      }
      this.shutDown(id, why);
      throw new RequestError("unavailable", `${why}; the space was removed`, { cause: e });
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
      throw new RequestError("unavailable", `no entity ids for ${count} entities: ${errorText(e)}`, { cause: e });
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
   * Shuts a space down: every cellapp of the space is told, and the
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
    for (const c of space.cells()) this.#forgetCell(id, c.id);
  }

  /** Real entities in every space: as the cells last reported them, and those spawned since. */
  entityCount(): number {
    let n = 0;
    for (const r of this.reports.values()) n += r.reals;
    for (const u of this.#unreported.values()) n += u;
    return n;
  }

  /** The last figures of each cell the tree gives `cellapp`. */
  reportsOf(cellapp: number): CellReport[] {
    const out: CellReport[] = [];
    for (const space of this.all.values()) {
      for (const c of space.cells()) {
        const r = c.cellapp === cellapp ? this.reports.get(`${space.id}/${c.id}`) : undefined;
        if (r) out.push(r);
      }
    }
    return out;
  }

  /** Records a cellapp's per-cell figures (of the cells the tree still gives it). */
  report(cellapp: number, cells: readonly CellReport[]): void {
    const touched = new Set<Space>();
    for (const c of cells) {
      const space = this.all.get(c.spaceId);
      if (!space || !space.cells().some((s) => s.id === c.cellId && s.cellapp === cellapp)) continue;
      if (c.reals > 0 || c.hadEntities) space.hasHadEntities = true;
      this.reports.set(`${c.spaceId}/${c.cellId}`, c);
      this.#unreported.delete(`${c.spaceId}/${c.cellId}`);
      if (space.shutDownWhenEmpty) touched.add(space);
    }
    for (const space of touched) this.#checkEmpty(space, cellapp);
  }

  /**
   * Shuts an instance space down once it is empty: every cell's report says no reals, nothing was spawned since, and
   * each of its cellapps has reported so EMPTY_REPORTS times in a row (a real handed to another cell is counted there
   * before it leaves here, but one report may have been made before that hand-over).
   */
  #checkEmpty(space: Space, cellapp: number): void {
    if (space.shuttingDown || !space.hasHadEntities || space.placing || space.bare) return;
    const empty = space.cells().every((c) => {
      const key = `${space.id}/${c.id}`;
      return this.reports.get(key)?.reals === 0 && !this.#unreported.get(key);
    });
    if (!empty) {
      space.emptyReports.clear();
      return;
    }
    space.emptyReports.set(cellapp, (space.emptyReports.get(cellapp) ?? 0) + 1);
    if (space.cellapps().every((a) => (space.emptyReports.get(a) ?? 0) >= EMPTY_REPORTS)) {
      this.shutDown(space.id, "the space is empty");
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
      if (g.navGeometry != null) space.navGeometry = g.navGeometry;
      space.shutDownWhenEmpty = g.shutDownWhenEmpty === true;
      this.all.set(g.spaceId, space);
      this.log.info(`${name} adopted from cellapp ${cellapp}`);
    }
    return refused;
  }

  /** The navigation geometry a new space gets: the one asked for, else the game's; a bad one is a RequestError. */
  #navGeometryOf(spec: SpaceSpec): string | null {
    let geometry: unknown = spec.geometry;
    if (geometry === undefined && this.geometryHook) {
      try {
        geometry = this.geometryHook({ bounds: { ...spec.bounds }, isDefault: !!spec.isDefault }) ?? undefined;
      } catch (e) {
        throw new RequestError("unavailable", `the game's spaceGeometry hook failed: ${errorText(e)}`, { cause: e });
      }
    }
    if (geometry === undefined) return null;
    const bad = navGeometryError(geometry);
    if (bad) throw new RequestError("bad_request", bad);
    return geometry as string;
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

  /** Forgets a gone cell's report and what was spawned into it since. */
  #forgetCell(spaceId: number, cellId: number): void {
    this.reports.delete(`${spaceId}/${cellId}`);
    this.#unreported.delete(`${spaceId}/${cellId}`);
  }

  /** A cellapp is gone: its cells leave their trees (tree_changes.ts dropCellApp). Returns the spaces left bare. */
  onCellAppLeft(cellapp: number): Space[] {
    return dropCellApp(this.#trees, cellapp);
  }

  /** Gives a space a new tree (tree_changes.ts setTree): load balancing moved a partition, added or removed a cell. */
  setTree(space: Space, tree: BspNode): Promise<void> {
    return setTree(this.#trees, space, tree);
  }

  /** Each space that lost its only cell gets a new one on a live cellapp (tree_changes.ts). */
  giveCellsToBareSpaces(): Promise<void> {
    return giveCellsToBareSpaces(this.#trees);
  }

  /** Resolves once `space` has a cell on a live cellapp again, or after `ms` (tree_changes.ts placed). */
  placed(space: Space, ms: number = PLACE_WAIT_MS): Promise<void> {
    return placed(this.#trees, space, ms);
  }
}
