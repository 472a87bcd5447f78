/**
 * What the admin API asks of the cellappmgr (admin/app.ts AdminBackend):
 * views of the cluster, its spaces, cells and entities, and an operator's
 * changes to them (spaces made, spawned into, patched and deleted, cellapps
 * retired, processes stopped, players kicked).
 */
import { errorText } from "../core/errors.ts";
import { CellMsg } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import { type Rect, rectFromArray } from "../core/geo/mod.ts";
import type { SpaceEntities } from "../core/game.ts";
import { VERSION } from "../core/version.ts";
import {
  type CellAppView,
  type CellEntityView,
  type CellView,
  type ClusterView,
  type CreateSpaceBody,
  type EntityInspectView,
  type EntityView,
  type HealthView,
  type KickView,
  type PatchSpaceBody,
  type PlayersView,
  type ProcessShutdownView,
  RequestError,
  type RetireView,
  type SpaceSummaryView,
  type SpaceView,
  type SpawnBody,
} from "../core/views.ts";
import type { Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";
import type { Balancer } from "./balance/mod.ts";
import type { MetricsGatherer } from "./metrics.ts";
import type { SpawnEntries, SpawnGuard } from "./spawn_guard.ts";
import { cellViews, spaceSummary } from "./views.ts";
import { inspectEntity, shutdownProcess } from "./process_control.ts";
import { kickPlayer, listPlayers } from "./players.ts";

/** How long an admin query of a cellapp may take. */
const QUERY_TIMEOUT_MS = 5_000;

/** What the admin operations need of the cellappmgr. */
export interface AdminHost {
  readonly registry: Registry;
  readonly spaces: Spaces;
  readonly balancer: Balancer;
  readonly log: Logger;
  /** GET /metrics: its own figures and every member's. */
  readonly metrics: MetricsGatherer;
  /** The checks every admin spawn passes, and the spawns under way. */
  readonly spawnGuard: SpawnGuard;
  /** Resolves once the rejoin window is closed (rejoin.ts). */
  readonly rejoin: { wait(): Promise<void> };
  /** When the cellappmgr started (ms since the epoch). */
  readonly startedAt: number;
  /** The address processes connect to. */
  address(): string;
  /** Whether a cluster shutdown is under way: nothing new is started. */
  shuttingDown(): boolean;
  /** Stores the cellapps being drained (balance/drains.ts). */
  saveDrains(): void;
  /** What the game puts in a new space (spawn_guard.ts gameEntities). */
  gameEntities(bounds: Rect, isDefault: boolean, npcs: number): SpaceEntities[];
}

/** The admin API's operations on the cellappmgr's state; the cellappmgr answers its AdminBackend with them. */
export class AdminOps {
  constructor(private readonly host: AdminHost) {}

  /** GET /api/health. */
  health(): HealthView {
    return { ok: true, role: "cellappmgr", version: VERSION };
  }

  /** GET /api/cluster: this process first, then every registered one. */
  cluster(): ClusterView {
    const self = {
      id: 0,
      role: "cellappmgr" as const,
      pid: Deno.pid,
      address: this.host.address(),
      uptimeS: Math.round((Date.now() - this.host.startedAt) / 100) / 10,
      lastHeartbeatMsAgo: 0,
      load: 0,
    };
    const views = this.host.registry.views().map((p) =>
      p.role === "cellapp" ? { ...p, cells: this.#cellsOf(p.id) } : p
    );
    return { processes: [self, ...views] };
  }

  #cellsOf(cellapp: number): (CellView & { spaceId: number })[] {
    return [...this.host.spaces.all.values()].flatMap((s) =>
      cellViews(s, this.host.spaces.reports).filter((c) => c.cellapp === cellapp).map((c) => ({ spaceId: s.id, ...c }))
    );
  }

  /** GET /metrics: Prometheus text from this process and every registered one, labelled with role and id. */
  metrics(): Promise<string> {
    return this.host.metrics.render([...this.host.registry.members.values()].sort((a, b) => a.id - b.id));
  }

  /** GET /api/spaces. */
  listSpaces(): SpaceSummaryView[] {
    return [...this.host.spaces.all.values()].sort((a, b) => a.id - b.id).map((s) =>
      spaceSummary(s, this.host.spaces.reports)
    );
  }

  /** GET /api/spaces/:id. */
  getSpace(id: number): SpaceView {
    const s = this.host.spaces.all.get(id);
    if (!s) throw new RequestError("not_found", `no space ${id}`);
    return {
      ...spaceSummary(s, this.host.spaces.reports),
      tree: s.tree,
      cells: cellViews(s, this.host.spaces.reports),
      balance: this.host.balancer.view(s),
      settings: this.host.spaces.settingsOf(s),
      navGeometry: s.navGeometry,
      shutDownWhenEmpty: s.shutDownWhenEmpty,
    };
  }

  /** PATCH /api/spaces/:id: switches the space's balancing on or off, changes its AoI and ghost radius. */
  patchSpace(id: number, body: PatchSpaceBody): SpaceView {
    const s = this.host.spaces.all.get(id);
    if (!s || s.shuttingDown) throw new RequestError("not_found", `no space ${id}`);
    if (body.aoiRadius !== undefined || body.ghostRadius !== undefined) {
      this.host.spaces.setSettings(s, { aoiRadius: body.aoiRadius, ghostRadius: body.ghostRadius });
    }
    if (body.balance !== undefined) this.host.balancer.setEnabled(s, body.balance);
    return this.getSpace(id);
  }

  /** POST /api/cellapps/:id/retire: drains a cellapp; its cells shrink to nothing and their entities move out. */
  retireCellApp(id: number): RetireView {
    const m = this.host.registry.members.get(id);
    if (!m || m.role !== "cellapp") throw new RequestError("not_found", `no cellapp ${id}`);
    const others = this.host.registry.withRole("cellapp").filter((c) =>
      c.id !== id && !this.host.spaces.draining.has(c.id)
    );
    if (others.length === 0 && this.host.balancer.cellsOn(id) > 0) {
      throw new RequestError(
        "conflict",
        `cellapp ${id} is the only cellapp that is not retiring: its cells have nowhere to go`,
      );
    }
    const cells = this.host.balancer.drain(id);
    this.host.saveDrains();
    return { id, retiring: true, cells };
  }

  /** POST /api/spaces (the body is validated by the admin API). */
  async createSpace(body: CreateSpaceBody): Promise<{ id: number }> {
    const entities = body.entities ?? [];
    return await this.#spawning(entities, async () => {
      const space = await this.host.spaces.create({
        bounds: rectFromArray(body.bounds),
        cells: body.cells ?? 1,
        entities: [...this.host.gameEntities(rectFromArray(body.bounds), false, 0), ...entities],
        balance: body.balance,
        settings: { aoiRadius: body.aoiRadius, ghostRadius: body.ghostRadius },
        geometry: body.geometry,
      });
      return { id: space.id };
    });
  }

  /** POST /api/spaces/:id/entities: spawns into a space, at a point when one is given. */
  async spawnInto(id: number, body: SpawnBody): Promise<{ spawned: number }> {
    return await this.#spawning(body.entities, async () => {
      const space = this.host.spaces.all.get(id);
      if (!space || space.shuttingDown) throw new RequestError("not_found", `no space ${id}`);
      let spawned = 0;
      for (const [i, e] of body.entities.entries()) {
        if (e.position) {
          const [x, , z] = e.position;
          const b = space.bounds;
          if (x < b.minX || x > b.maxX || z < b.minZ || z > b.maxZ) {
            throw new RequestError("bad_request", `entities.${i}.position: (${x}, ${z}) is outside space ${id}`);
          }
        }
        spawned += await this.host.spaces.spawn(space, e.type, e.count, e.props, e.position);
      }
      return { spawned };
    });
  }

  /** Runs `spawn` once the cluster is up and `entries` pass the SpawnGuard's checks. */
  async #spawning<T>(entries: SpawnEntries, spawn: () => Promise<T>): Promise<T> {
    if (this.host.shuttingDown()) throw new RequestError("unavailable", "the cluster is shutting down");
    await this.host.rejoin.wait();
    return await this.host.spawnGuard.run(entries, spawn);
  }

  /** DELETE /api/spaces/:id. */
  deleteSpace(id: number): { id: number; shuttingDown: true } {
    this.host.spaces.shutDown(id, "asked through the admin API");
    return { id, shuttingDown: true };
  }

  /** GET /api/cellapps/:id. */
  getCellApp(id: number): CellAppView {
    const view = this.host.registry.views().find((p) => p.id === id && p.role === "cellapp");
    if (!view) throw new RequestError("not_found", `no cellapp ${id}`);
    return { ...view, cells: this.#cellsOf(id), retiring: this.host.spaces.draining.has(id) };
  }

  /** GET /api/cellapps/:id/cells/:spaceId: asks the cellapp for the cell's entities. */
  async getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]> {
    const m = this.host.registry.members.get(cellappId);
    if (!m || m.role !== "cellapp") throw new RequestError("not_found", `no cellapp ${cellappId}`);
    const list = await m.channel.requestWithin(QUERY_TIMEOUT_MS, CellMsg.describeCell, spaceId);
    if (list === null) throw new RequestError("not_found", `cellapp ${cellappId} has no cell of space ${spaceId}`);
    return list;
  }

  /** GET /api/entities/:id: asks every cellapp, the one holding the real answers. */
  async findEntity(id: number): Promise<EntityView> {
    const apps = this.host.registry.withRole("cellapp");
    const answers = await Promise.all(apps.map(async (m) => {
      try {
        return { m, loc: await m.channel.requestWithin(QUERY_TIMEOUT_MS, CellMsg.findEntity, id) };
      } catch (e) {
        this.host.log.warn(`cellapp ${m.id} did not answer findEntity ${id}: ${errorText(e)}`);
        return { m, loc: null };
      }
    }));
    const real = answers.find((a) => a.loc?.real);
    if (!real || !real.loc) throw new RequestError("not_found", `no entity ${id}`);
    const ghosts = answers.filter((a) => a.loc && !a.loc.real).map((a) => a.m.id);
    const { type, spaceId, position, base } = real.loc;
    const baseapp = base ? this.host.registry.withRole("baseapp").find((m) => m.address === base)?.id ?? null : null;
    return { id, type, spaceId, position, cellapp: real.m.id, ghosts, base: baseapp };
  }

  /** POST /api/processes/:id/shutdown (process_control.ts). */
  shutdownProcess(id: number, force: boolean): ProcessShutdownView {
    if (this.host.shuttingDown()) throw new RequestError("unavailable", "the cluster is shutting down");
    return shutdownProcess(
      {
        registry: this.host.registry,
        balancer: this.host.balancer,
        log: this.host.log,
        retire: (c) => this.retireCellApp(c).cells,
      },
      id,
      force,
    );
  }

  /** An entity with its cell properties (the admin watch socket's entity topic). */
  inspectEntity(id: number): Promise<EntityInspectView> {
    return inspectEntity(this.host.registry, (e) => this.findEntity(e), id);
  }

  /** GET /api/players (players.ts). */
  players(): Promise<PlayersView> {
    return listPlayers(this.host.registry, this.host.log);
  }

  /** POST /api/players/:name/kick (players.ts). */
  kickPlayer(name: string, reason: string): Promise<KickView> {
    return kickPlayer(this.host.registry, this.host.log, name, reason);
  }
}
