import {
  type CellEntitySpec,
  CellMsg,
  type Channel,
  Handlers,
  MgrMsg,
  ProcMsg,
  RestoreMsg,
  sameAddress,
  WireServer,
} from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import { VERSION } from "../core/version.ts";
import type { Rect } from "../core/geo/rect.ts";
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
  type ProcessChange,
  type ProcessShutdownView,
  RequestError,
  type RetireView,
  type ShutdownView,
  type SpaceSummaryView,
  type SpaceView,
  type SpawnBody,
} from "../core/views.ts";
import { type Member, Registry } from "./registry.ts";
import { IdAllocator } from "./ids.ts";
import { Buddies } from "./buddies.ts";
import { announceDeath, holderOf, restoreCellEntity } from "./restore.ts";
import { announceBaseAppDeath, announceBaseApps } from "./base_members.ts";
import { DEFAULT_SPACE_ID, Spaces } from "./spaces.ts";
import { adoptClaims, dropMissingCellApps, REJOIN_WINDOW_MS, RejoinWindow } from "./rejoin.ts";
import { cellViews, spaceSummary } from "./views.ts";
import { Balancer } from "./balance/mod.ts";
import { loadDrains, saveDrains } from "./balance/drains.ts";
import { rectFromArray } from "../core/geo/rect.ts";
import { cellIndexAt } from "../core/geo/bsp.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import type { SpaceCreatedHook, SpaceEntities } from "../core/game.ts";
import { SPACE_SETTINGS_DEFAULTS, spaceSettingsIn } from "../core/space_settings.ts";
import { ProcessMetrics } from "../core/metrics.ts";
import { MetricsGatherer } from "./metrics.ts";
import { gameEntities, type SpawnEntries, SpawnGuard } from "./spawn_guard.ts";
import { inspectEntity, shutdownProcess } from "./process_control.ts";
import { kickPlayer, listPlayers } from "./players.ts";
import { type GlobalStore, serveBaseScripts } from "./base_scripts.ts";

/** How a cellappmgr is started. */
export interface CellAppMgrOptions {
  host: string;
  port: number;
  secret: string | null;
  maxFrame: number;
  log: Logger;
  /** Database for the entity id high-water mark; null keeps it in memory. */
  kv: Deno.Kv | null;
  /** The game's entity types: spawn requests' properties are checked against them. */
  registry: EntityRegistry;
  /** Bounds of the default space, and the NPCs asked for in it (`--npcs`, told to the game's spaceCreated hook). */
  defaultSpace: { bounds: Rect; npcs: number };
  /** The game's say on what a space it makes holds (core/game.ts); none leaves new spaces empty. */
  spaceCreated?: SpaceCreatedHook;
  /** Channel heartbeat period and silence after which a process is dropped. */
  heartbeatMs?: number;
  deadAfterMs?: number;
  /** Most entities one admin spawn request may create (default 10,000). */
  spawnLimit?: number;
  /** Most entities the cluster may hold after an admin spawn request (default 100,000). */
  entityLimit?: number;
  /** How long members of a previous run get to register again before spaces and ids are decided (REJOIN_WINDOW_MS). */
  rejoinWindowMs?: number;
  /** How often partitions follow the load (ms, default 1000); 0 keeps them still. */
  balancePeriodMs?: number;
  /** The cellapps' ghost radius (m): no balanced cell becomes narrower; a space's default ghost radius. */
  ghostRadius?: number;
  /** The cellapps' AoI radius (m): a space's default. */
  aoiRadius?: number;
}

/** How long a process gets to stop on request before the cellappmgr moves on. */
const STOP_TIMEOUT_MS = 15_000;
/** Silence after which a member is declared dead, unless configured. */
const DEAD_AFTER_MS = 2000;
/** How long an admin query of a cellapp may take. */
const QUERY_TIMEOUT_MS = 5_000;

/**
 * The control plane: knows every cellapp and baseapp, every space and its
 * cells, hands out entity ids, and implements what the admin API needs.
 */
export class CellAppMgr {
  readonly registry: Registry;
  readonly spaces: Spaces;
  readonly server: WireServer;
  readonly startedAt: number = Date.now();
  /** Resolves when a cluster shutdown has stopped every other process. */
  readonly shutdownDone: Promise<void>;
  #log: Logger;
  #ids: IdAllocator;
  #opts: CellAppMgrOptions;
  #shuttingDown = false;
  /** The default space being made, which cell entities for it wait for. */
  #creatingDefault: Promise<void> | null = null;
  #rejoin: RejoinWindow;
  /** Cellapps that left while the rejoin window was open, with their buddies: announced dead if not back by its end. */
  #leftInRejoin = new Map<number, { member: Member; buddy: number | null }>();
  /** The checks every admin spawn passes, and the spawns under way. */
  readonly #spawnGuard: SpawnGuard;
  #resolveShutdown!: () => void;
  /** Where each cellapp backs up its NPCs. */
  readonly buddies: Buddies;
  /** The global store of base scripts, which it orders (base_scripts.ts). */
  readonly globals: GlobalStore;
  /** Moves partitions with the load, adds and retires cells. */
  readonly balancer: Balancer;
  /** The default space was lost with a cellapp that had a buddy: made again, its NPCs come back from their backups. */
  #defaultNpcsRestored = false;
  /** GET /metrics: its own figures and every member's. */
  readonly #metrics: MetricsGatherer;
  /** Who hears of processes joining and leaving (the admin watch socket). */
  #processListeners = new Set<(change: ProcessChange) => void>();

  private constructor(opts: CellAppMgrOptions, ids: IdAllocator) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#ids = ids;
    this.#metrics = new MetricsGatherer(new ProcessMetrics(), opts.log);
    this.registry = new Registry(opts.log);
    this.buddies = new Buddies(this.registry, opts.log);
    this.spaces = new Spaces(this.registry, opts.log, (n) => this.#ids.allocate(n));
    this.spaces.settingsDefaults = spaceSettingsIn(opts, SPACE_SETTINGS_DEFAULTS);
    this.#spawnGuard = new SpawnGuard({
      registry: opts.registry,
      held: () => this.spaces.entityCount(),
      spawnLimit: opts.spawnLimit ?? 10_000,
      entityLimit: opts.entityLimit ?? 100_000,
    });
    this.balancer = new Balancer(
      {
        spaces: () => this.spaces.all.values(),
        report: (spaceId, cellId) => this.spaces.reports.get(`${spaceId}/${cellId}`),
        cellapps: () => this.registry.withRole("cellapp"),
        setTree: (space, tree) => this.spaces.setTree(space, tree),
      },
      this.spaces.draining,
      {
        periodMs: opts.balancePeriodMs ?? 1000,
        // Each cellapp reports its ghost radius: no cell of it is made narrower.
        minWidth: 0,
        log: opts.log,
      },
    );
    this.shutdownDone = new Promise((r) => (this.#resolveShutdown = r));
    this.#rejoin = new RejoinWindow(opts.rejoinWindowMs ?? REJOIN_WINDOW_MS, () => this.#rejoined());
    this.registry.onChange = (m, event, reason) => {
      this.#tellProcessChange(m, event, reason);
      if (m.role === "baseapp" && !this.#shuttingDown) return this.#baseAppsChanged(m, event);
      if (m.role !== "cellapp" || this.#shuttingDown) return;
      if (event === "left" && this.#rejoin.isOpen) {
        // Nothing it held has been given away yet, and a member of the previous run may lose its connection while it
        // finds its way back: its cells wait for it until the window closes, and it may register again unfenced.
        this.#leftInRejoin.set(m.id, { member: m, buddy: this.buddies.buddyOf(m.id) });
        this.registry.pardon(m.generation);
        this.#log.warn(`cellapp ${m.id} left during the rejoin window: its cells wait for it until the window closes`);
        return;
      }
      if (event === "joined") this.#leftInRejoin.delete(m.id);
      if (event === "left") {
        if (this.spaces.draining.has(m.id)) {
          this.balancer.forget(m.id);
          void saveDrains(this.#opts.kv, this.spaces.draining, this.#log);
        }
        const lost = this.spaces.onCellAppLeft(m.id);
        const buddy = this.buddies.buddyOf(m.id);
        if (buddy !== null && lost.some((s) => s.isDefault)) this.#defaultNpcsRestored = true;
        announceDeath(this.registry, m, buddy, this.#log);
      }
      // After the current message: a new cellapp must get its registration reply before createCell.
      setTimeout(() => {
        this.buddies.update();
        void this.#ensureDefaultSpace();
        if (!this.#rejoin.isOpen && !this.#shuttingDown) void this.spaces.giveCellsToBareSpaces();
      }, 0);
    };
    const handlers = new Handlers()
      .on(MgrMsg.register, async (ch, info) => {
        if (this.#shuttingDown) throw new Error("the cluster is shutting down");
        const peer = ch.peer;
        if (info.role !== peer.role || info.pid !== peer.pid || !sameAddress(info.address, peer.address)) {
          ch.drop(
            `registers as ${info.role} pid ${info.pid} at ${info.address} but connected as ` +
              `${peer.role} pid ${peer.pid} at ${peer.address}`,
          );
          throw new Error("registration does not match the connection");
        }
        if (info.spaces && info.role !== "cellapp") {
          ch.drop(`registers as a ${info.role} that runs spaces`);
          throw new Error("only a cellapp runs spaces");
        }
        const far = this.#ids.observe(info.entityIdHighWater);
        if (far) {
          ch.drop(`registers with ${far}`);
          throw new Error(far);
        }
        const deadAfterMs = this.#opts.deadAfterMs ?? DEAD_AFTER_MS;
        const fenced = this.registry.fencedWhy(ch, info);
        if (fenced) {
          this.#log.warn(
            `${info.role} pid ${info.pid} at ${info.address} is fenced: ${fenced}; it registers anew, empty`,
          );
          return { id: 0, mgrPid: Deno.pid, generation: 0, deadAfterMs, fenced, deadGenerations: [] };
        }
        // A process new to the cluster gets its id once the returning ones have theirs back.
        if (info.previousId === null) await this.#rejoin.wait();
        if (this.#shuttingDown) throw new Error("the cluster is shutting down");
        if (!ch.isOpen) throw new Error("the connection closed before the registration");
        const m = this.registry.register(ch, info);
        if (info.spaces?.length) adoptClaims(this.spaces, m, info.spaces, this.#log);
        return {
          id: m.id,
          mgrPid: Deno.pid,
          generation: m.generation,
          deadAfterMs,
          fenced: null,
          deadGenerations: this.registry.deadGenerations(),
        };
      })
      .on(MgrMsg.allocateIds, async (ch, count) => {
        this.#member(ch, "allocateIds");
        await this.#rejoin.wait();
        return await this.#ids.allocate(count);
      })
      .on(MgrMsg.requestShutDownSpace, (ch, spaceId, why) => {
        const m = this.#member(ch, "requestShutDownSpace");
        const space = this.spaces.all.get(spaceId);
        if (!space || space.isDefault) return;
        if (!space.cellapps().includes(m.id)) {
          this.#log.warn(`cellapp ${m.id} asked to shut down space ${spaceId}, which it has no cell of; ignored`);
          return;
        }
        if (!space.hasHadEntities) {
          // Seed 003: a space that never held an entity is still being set up; the cell asks again after it reports.
          this.#log.info(`space ${spaceId} has not had any entities; not shutting it down (asked by cellapp ${m.id})`);
          return;
        }
        this.spaces.shutDown(spaceId, `${why} (asked by cellapp ${m.id})`);
      })
      .on(MgrMsg.setSpaceSettings, (ch, spaceId, change) => {
        const m = this.#member(ch, "setSpaceSettings");
        const space = this.spaces.all.get(spaceId);
        if (!space || space.shuttingDown || !space.cellapps().includes(m.id)) {
          throw new Error(`space ${spaceId} is not running a cell on cellapp ${m.id}`);
        }
        return this.spaces.setSettings(space, change);
      })
      .on(MgrMsg.loadReport, (ch, report) => {
        const m = this.#member(ch, "loadReport");
        m.load = report.load;
        m.peerBytesOut = report.peerBytesOut ?? m.peerBytesOut;
        m.ghostRadius = report.ghostRadius ?? m.ghostRadius;
        this.spaces.report(m.id, report.cells);
      })
      .on(MgrMsg.createCellEntity, (ch, spec) => {
        const m = this.#member(ch, "createCellEntity");
        if (!sameAddress(spec.baseAddress, m.address)) {
          ch.drop(`createCellEntity for entity ${spec.entityId} names the base at ${spec.baseAddress}, not itself`);
          throw new Error("a baseapp creates cell entities for its own bases only");
        }
        // A base loaded from a database this cellappmgr never saw may hold an id beyond its counter: never hand it out.
        const far = this.#ids.observe(spec.entityId);
        if (far) {
          ch.drop(`createCellEntity with ${far}`);
          throw new Error(far);
        }
        return this.#createCellEntity(spec);
      })
      .on(RestoreMsg.restoreCellEntity, async (ch, backup, baseAddress, hasClient) => {
        const m = this.#member(ch, "restoreCellEntity");
        const own = m.role === "baseapp" ? baseAddress !== null && sameAddress(baseAddress, m.address) : !baseAddress;
        if (!own) {
          ch.drop(`restoreCellEntity for entity ${backup.entity.id} names the base at ${baseAddress}`);
          throw new Error("a baseapp restores its own bases' cell entities only, a cellapp entities without a base");
        }
        // The default space may be being made again (its cellapp died): its entities come back into the new one.
        if (backup.spaceId === DEFAULT_SPACE_ID) await this.#ensureDefaultSpace();
        return restoreCellEntity(this.spaces, this.registry, backup, baseAddress, hasClient, this.#log);
      })
      .on(MgrMsg.findCell, async (ch, spaceId, x, z) => {
        this.#member(ch, "findCell");
        await this.#rejoin.wait();
        const space = this.spaces.all.get(spaceId);
        if (!space || space.shuttingDown) throw new Error(`no space ${spaceId}`);
        const cell = space.cells()[cellIndexAt(space.tree, x, z)];
        const m = this.registry.members.get(cell.cellapp);
        if (!m) throw new Error(`the cellapp ${cell.cellapp} of space ${spaceId} is gone`);
        return { cellapp: m.id, address: m.address, cell: cell.id };
      });
    this.globals = serveBaseScripts(handlers, this.registry, (ch, what) => this.#member(ch, what), this.#log);
    this.server = new WireServer({
      host: opts.host,
      port: opts.port,
      role: "cellappmgr",
      acceptRoles: ["cellapp", "baseapp"],
      secret: opts.secret,
      maxFrame: opts.maxFrame,
      heartbeatMs: opts.heartbeatMs ?? 500,
      deadAfterMs: opts.deadAfterMs ?? DEAD_AFTER_MS,
      handlers,
      log: opts.log,
    });
  }

  /** A baseapp joined or left: the baseapps hear the new list (after a new one's registration reply), all of a death. */
  #baseAppsChanged(m: Member, event: "joined" | "left"): void {
    if (event === "left") announceBaseAppDeath(this.registry, m, this.#log);
    setTimeout(() => announceBaseApps(this.registry, this.#log), 0);
  }

  /** The registered process on `ch`; a process that has not registered is dropped for sending `what`. */
  #member(ch: Channel, what: string): Member {
    const m = this.registry.memberOn(ch);
    if (m) return m;
    ch.drop(`sent ${what} before registering`);
    throw new Error(`${what}: register first`);
  }

  #tellProcessChange(m: Member, event: "joined" | "left", reason?: string): void {
    const change: ProcessChange = {
      event,
      process: { id: m.id, role: m.role, pid: m.pid, address: m.address },
      ...(reason === undefined ? {} : { reason }),
    };
    for (const listener of this.#processListeners) {
      try {
        listener(change);
      } catch (e) {
        this.#log.error(`a process change listener failed: ${(e as Error).message}`);
      }
    }
  }

  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void {
    this.#processListeners.add(listener);
    return () => this.#processListeners.delete(listener);
  }

  /** POST /api/processes/:id/shutdown (process_control.ts). */
  shutdownProcess(id: number, force: boolean): ProcessShutdownView {
    if (this.#shuttingDown) throw new RequestError("unavailable", "the cluster is shutting down");
    return shutdownProcess(
      { registry: this.registry, balancer: this.balancer, log: this.#log, retire: (c) => this.retireCellApp(c).cells },
      id,
      force,
    );
  }

  /** An entity with its cell properties (the admin watch socket's entity topic). */
  inspectEntity(id: number): Promise<EntityInspectView> {
    return inspectEntity(this.registry, (e) => this.findEntity(e), id);
  }

  /** GET /api/players (players.ts). */
  players(): Promise<PlayersView> {
    return listPlayers(this.registry, this.#log);
  }

  /** POST /api/players/:name/kick (players.ts). */
  kickPlayer(name: string, reason: string): Promise<KickView> {
    return kickPlayer(this.registry, this.#log, name, reason);
  }

  /** Opens the id counter, then listens for processes. */
  static async start(opts: CellAppMgrOptions): Promise<CellAppMgr> {
    const mgr = new CellAppMgr(opts, await IdAllocator.open(opts.kv));
    // An operator's drains go on across a restart: the cellapps come back with their ids.
    for (const id of await loadDrains(opts.kv, opts.log)) mgr.spaces.draining.add(id);
    return mgr;
  }

  /** The address processes connect to. */
  get address(): string {
    return this.server.address;
  }

  /**
   * A base's cell entity: in its space (or a new one, seed 003's
   * createEntityInNewSpace), on the cellapp whose cell contains its position.
   */
  async #createCellEntity(spec: CellEntitySpec): Promise<{ spaceId: number; cellapp: number; cellappAddress: string }> {
    await this.#rejoin.wait();
    // Its real may live on (its baseapp died and came back, or lost the answer): that cellapp adopts it, wherever it
    // walked since the base last knew, rather than a second real being made where the base thinks it is.
    const holder = await holderOf(this.registry, spec.entityId, this.#log);
    if (holder) {
      await holder.channel.request(CellMsg.createCellEntity, { ...spec, spaceId: holder.spaceId });
      return { spaceId: holder.spaceId, cellapp: holder.id, cellappAddress: holder.address };
    }
    if (spec.spaceId === DEFAULT_SPACE_ID) await this.#ensureDefaultSpace();
    const [x, , z] = spec.position;
    const around = { minX: x - 1000, minZ: z - 1000, maxX: x + 1000, maxZ: z + 1000 };
    const space = spec.spaceId === 0
      ? await this.spaces.create({ bounds: around, cells: 1, entities: this.#gameEntities(around, false, 0) })
      : this.spaces.all.get(spec.spaceId);
    if (!space) {
      throw new Error(
        `no space ${spec.spaceId}${
          spec.spaceId === DEFAULT_SPACE_ID ? " (the default space is made once a cellapp has registered)" : ""
        }`,
      );
    }
    if (space.shuttingDown) throw new Error(`space ${space.id} is shutting down`);
    await this.spaces.placed(space);
    const cell = space.cells()[cellIndexAt(space.tree, x, z)];
    const m = this.registry.members.get(cell.cellapp);
    if (!m) throw new Error(`the cellapp ${cell.cellapp} of space ${space.id} is gone`);
    await m.channel.request(CellMsg.createCellEntity, { ...spec, spaceId: space.id });
    space.hasHadEntities = true;
    return { spaceId: space.id, cellapp: m.id, cellappAddress: m.address };
  }

  /**
   * Creates the default space on the best cellapp once the rejoin window is
   * over and no cellapp reported it (a default space whose cellapp died is kept: see giveCellsToBareSpaces); resolves
   * when it exists (or could not be made, which is logged).
   */
  #ensureDefaultSpace(): Promise<void> {
    if (this.#creatingDefault) return this.#creatingDefault;
    if (this.#shuttingDown || this.#rejoin.isOpen || this.spaces.all.has(DEFAULT_SPACE_ID)) return Promise.resolve();
    if (this.registry.withRole("cellapp").length === 0) return Promise.resolve();
    this.#creatingDefault = this.#createDefaultSpace().finally(() => (this.#creatingDefault = null));
    return this.#creatingDefault;
  }

  async #createDefaultSpace(): Promise<void> {
    try {
      const { bounds, npcs } = this.#opts.defaultSpace;
      const restored = this.#defaultNpcsRestored;
      this.#defaultNpcsRestored = false;
      if (restored) this.#log.info("the default space is made again; its NPCs come back from their backups");
      await this.spaces.create({
        bounds,
        cells: 1,
        isDefault: true,
        entities: restored ? [] : this.#gameEntities(bounds, true, npcs),
      });
    } catch (e) {
      const why = `could not create the default space: ${(e as Error).message}`;
      // A cellapp that reported it meanwhile runs it: nothing is missing.
      if (this.spaces.all.has(DEFAULT_SPACE_ID)) this.#log.info(why);
      else this.#log.error(why);
    }
  }

  /** The rejoin window is over: what the members reported is all there is; the default space is made if missing. */
  #rejoined(): void {
    const missing = dropMissingCellApps(this.spaces, this.registry);
    // Those that left during the window and did not come back: their entities come back from their backups.
    for (const id of missing) {
      const left = this.#leftInRejoin.get(id);
      if (left) announceDeath(this.registry, left.member, left.buddy, this.#log);
    }
    this.#leftInRejoin.clear();
    const spaces = [...this.spaces.all.keys()].sort((a, b) => a - b);
    this.#log.info(
      `rejoin window over: ${this.registry.withRole("cellapp").length} cellapp(s) and ` +
        `${this.registry.withRole("baseapp").length} baseapp(s) back, ` +
        `${spaces.length ? `space(s) ${spaces.join(", ")} adopted` : "no space to adopt"}` +
        `${missing.length ? `, cellapp(s) ${missing.join(", ")} missing` : ""}; ` +
        `entity ids go on from ${this.#ids.next}`,
    );
    void this.#ensureDefaultSpace();
    void this.spaces.giveCellsToBareSpaces();
    // A drain stored for a cellapp that did not come back ends: a new cellapp may be given its id.
    const stale = [...this.spaces.draining].filter((id) => !this.registry.members.has(id));
    for (const id of stale) this.spaces.draining.delete(id);
    if (stale.length > 0) void saveDrains(this.#opts.kv, this.spaces.draining, this.#log);
    // Partitions move only once the spaces are what the members say they are.
    this.balancer.start();
  }

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
      address: this.address,
      uptimeS: Math.round((Date.now() - this.startedAt) / 100) / 10,
      lastHeartbeatMsAgo: 0,
      load: 0,
    };
    const views = this.registry.views().map((p) => p.role === "cellapp" ? { ...p, cells: this.#cellsOf(p.id) } : p);
    return { processes: [self, ...views] };
  }

  #cellsOf(cellapp: number): (CellView & { spaceId: number })[] {
    return [...this.spaces.all.values()].flatMap((s) =>
      cellViews(s, this.spaces.reports).filter((c) => c.cellapp === cellapp).map((c) => ({ spaceId: s.id, ...c }))
    );
  }

  /** GET /metrics: Prometheus text from this process and every registered one, labelled with role and id. */
  metrics(): Promise<string> {
    return this.#metrics.render([...this.registry.members.values()].sort((a, b) => a.id - b.id));
  }

  /** GET /api/spaces. */
  listSpaces(): SpaceSummaryView[] {
    return [...this.spaces.all.values()].sort((a, b) => a.id - b.id).map((s) => spaceSummary(s, this.spaces.reports));
  }

  /** GET /api/spaces/:id. */
  getSpace(id: number): SpaceView {
    const s = this.spaces.all.get(id);
    if (!s) throw new RequestError("not_found", `no space ${id}`);
    return {
      ...spaceSummary(s, this.spaces.reports),
      tree: s.tree,
      cells: cellViews(s, this.spaces.reports),
      balance: this.balancer.view(s),
      settings: this.spaces.settingsOf(s),
    };
  }

  /** PATCH /api/spaces/:id: switches the space's balancing on or off, changes its AoI and ghost radius. */
  patchSpace(id: number, body: PatchSpaceBody): SpaceView {
    const s = this.spaces.all.get(id);
    if (!s || s.shuttingDown) throw new RequestError("not_found", `no space ${id}`);
    if (body.aoiRadius !== undefined || body.ghostRadius !== undefined) {
      this.spaces.setSettings(s, { aoiRadius: body.aoiRadius, ghostRadius: body.ghostRadius });
    }
    if (body.balance !== undefined) this.balancer.setEnabled(s, body.balance);
    return this.getSpace(id);
  }

  /** POST /api/cellapps/:id/retire: drains a cellapp; its cells shrink to nothing and their entities move out. */
  retireCellApp(id: number): RetireView {
    const m = this.registry.members.get(id);
    if (!m || m.role !== "cellapp") throw new RequestError("not_found", `no cellapp ${id}`);
    const others = this.registry.withRole("cellapp").filter((c) => c.id !== id && !this.spaces.draining.has(c.id));
    if (others.length === 0 && this.balancer.cellsOn(id) > 0) {
      throw new RequestError(
        "conflict",
        `cellapp ${id} is the only cellapp that is not retiring: its cells have nowhere to go`,
      );
    }
    const cells = this.balancer.drain(id);
    void saveDrains(this.#opts.kv, this.spaces.draining, this.#log);
    return { id, retiring: true, cells };
  }

  /** POST /api/spaces (the body is validated by the admin API). */
  async createSpace(body: CreateSpaceBody): Promise<{ id: number }> {
    const entities = body.entities ?? [];
    return await this.#spawning(entities, async () => {
      const space = await this.spaces.create({
        bounds: rectFromArray(body.bounds),
        cells: body.cells ?? 1,
        entities: [...this.#gameEntities(rectFromArray(body.bounds), false, 0), ...entities],
        balance: body.balance,
        settings: { aoiRadius: body.aoiRadius, ghostRadius: body.ghostRadius },
      });
      return { id: space.id };
    });
  }

  /** POST /api/spaces/:id/entities: spawns into a space, at a point when one is given. */
  async spawnInto(id: number, body: SpawnBody): Promise<{ spawned: number }> {
    return await this.#spawning(body.entities, async () => {
      const space = this.spaces.all.get(id);
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
        spawned += await this.spaces.spawn(space, e.type, e.count, e.props, e.position);
      }
      return { spawned };
    });
  }

  /** Runs `spawn` once the cluster is up and `entries` pass the SpawnGuard's checks. */
  async #spawning<T>(entries: SpawnEntries, spawn: () => Promise<T>): Promise<T> {
    if (this.#shuttingDown) throw new RequestError("unavailable", "the cluster is shutting down");
    await this.#rejoin.wait();
    return await this.#spawnGuard.run(entries, spawn);
  }

  #gameEntities(bounds: Rect, isDefault: boolean, npcs: number): SpaceEntities[] {
    return gameEntities(this.#opts.spaceCreated, this.#opts.registry, this.#log, { bounds, isDefault, npcs });
  }

  /** DELETE /api/spaces/:id. */
  deleteSpace(id: number): { id: number; shuttingDown: true } {
    this.spaces.shutDown(id, "asked through the admin API");
    return { id, shuttingDown: true };
  }

  /** GET /api/cellapps/:id. */
  getCellApp(id: number): CellAppView {
    const view = this.registry.views().find((p) => p.id === id && p.role === "cellapp");
    if (!view) throw new RequestError("not_found", `no cellapp ${id}`);
    return { ...view, cells: this.#cellsOf(id), retiring: this.spaces.draining.has(id) };
  }

  /** GET /api/cellapps/:id/cells/:spaceId: asks the cellapp for the cell's entities. */
  async getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]> {
    const m = this.registry.members.get(cellappId);
    if (!m || m.role !== "cellapp") throw new RequestError("not_found", `no cellapp ${cellappId}`);
    const list = await m.channel.requestWithin(QUERY_TIMEOUT_MS, CellMsg.describeCell, spaceId);
    if (list === null) throw new RequestError("not_found", `cellapp ${cellappId} has no cell of space ${spaceId}`);
    return list;
  }

  /** GET /api/entities/:id: asks every cellapp, the one holding the real answers. */
  async findEntity(id: number): Promise<EntityView> {
    const apps = this.registry.withRole("cellapp");
    const answers = await Promise.all(apps.map(async (m) => {
      try {
        return { m, loc: await m.channel.requestWithin(QUERY_TIMEOUT_MS, CellMsg.findEntity, id) };
      } catch (e) {
        this.#log.warn(`cellapp ${m.id} did not answer findEntity ${id}: ${(e as Error).message}`);
        return { m, loc: null };
      }
    }));
    const real = answers.find((a) => a.loc?.real);
    if (!real || !real.loc) throw new RequestError("not_found", `no entity ${id}`);
    const ghosts = answers.filter((a) => a.loc && !a.loc.real).map((a) => a.m.id);
    const { type, spaceId, position, base } = real.loc;
    const baseapp = base ? this.registry.withRole("baseapp").find((m) => m.address === base)?.id ?? null : null;
    return { id, type, spaceId, position, cellapp: real.m.id, ghosts, base: baseapp };
  }

  /**
   * POST /api/shutdown: stops baseapps first (they persist their entities),
   * then cellapps; `shutdownDone` resolves when all are gone. Repeated calls
   * join the shutdown already running.
   */
  shutdownCluster(): ShutdownView {
    const count = this.registry.members.size;
    if (!this.#shuttingDown) {
      this.#shuttingDown = true;
      this.balancer.stop();
      this.#log.info(`cluster shutdown requested: stopping ${count} processes`);
      this.#stopAll().finally(() => this.#resolveShutdown());
    }
    return { stopping: true, processes: count };
  }

  async #stopAll(): Promise<void> {
    for (const role of ["baseapp", "cellapp"] as const) {
      await Promise.all(this.registry.withRole(role).map((m) => this.#stopMember(m)));
    }
    this.#log.info("every process has stopped");
  }

  async #stopMember(m: Member): Promise<void> {
    try {
      await m.channel.requestWithin(STOP_TIMEOUT_MS, ProcMsg.stop, "cluster shutdown");
    } catch (e) {
      this.#log.warn(`${m.role} ${m.id} did not acknowledge stop: ${(e as Error).message}`);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gone = await Promise.race([
      m.channel.closed.then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), STOP_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (!gone) this.#log.warn(`${m.role} ${m.id} (pid ${m.pid}) still connected after stop`);
  }

  /** Stops serving: closes every channel and the listener. */
  close(): void {
    this.#metrics.own.close();
    this.balancer.stop();
    this.#rejoin.dispose();
    this.server.close("cellappmgr stopping");
  }
}
