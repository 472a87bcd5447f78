/**
 * The cellappmgr: wires the registry of processes, the spaces, balancing,
 * failure handling and the wire server together, and answers the admin API
 * (admin/app.ts AdminBackend) through AdminOps.
 */
import { type CellEntitySpec, type CellPlaceRequest, WireServer, type WireTls } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Db } from "../core/db/mod.ts";
import type { Rect } from "../core/geo/mod.ts";
import type {
  CellAppView,
  CellEntityView,
  ClusterView,
  CreateSpaceBody,
  EntityInspectView,
  EntityView,
  HealthView,
  KickView,
  PatchSpaceBody,
  PlayersView,
  ProcessChange,
  ProcessShutdownView,
  RetireView,
  ShutdownView,
  SpaceSummaryView,
  SpaceView,
  SpawnBody,
} from "../core/views.ts";
import { type GameReloadView, RequestError } from "../core/views.ts";
import type { GameReloader } from "../core/game_reload.ts";
import { ClusterReload } from "./game_reload.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import type { Game, SpaceCreatedHook, SpaceEntities, SpaceGeometryHook } from "../core/game.ts";
import { SPACE_SETTINGS_DEFAULTS, spaceSettingsIn } from "../core/space_settings.ts";
import { ProcessMetrics } from "../core/metrics.ts";
import { type Member, Registry } from "./registry.ts";
import { IdAllocator } from "./ids.ts";
import { Buddies } from "./buddies.ts";
import { Spaces } from "./spaces.ts";
import { REJOIN_WINDOW_MS, RejoinWindow } from "./rejoin.ts";
import { Balancer, DEFAULT_MIN_CELL_WIDTH } from "./balance/mod.ts";
import { loadDrains, saveDrains } from "./balance/drains.ts";
import { MetricsGatherer } from "./metrics.ts";
import { gameEntities, SpawnGuard } from "./spawn_guard.ts";
import { stopCluster } from "./process_control.ts";
import { type GlobalStore, serveBaseScripts } from "./base_scripts.ts";
import { DefaultSpace } from "./default_space.ts";
import { Membership } from "./membership.ts";
import { memberOn, mgrHandlers } from "./wire_handlers.ts";
import { type CellEntityHost, createCellEntity, placeCellEntity } from "./cell_entities.ts";
import { AdminOps } from "./admin_ops.ts";

/** How a cellappmgr is started. */
export interface CellAppMgrOptions {
  host: string;
  port: number;
  secret: string | null;
  /** Process ports over TLS (--tls-ca); null: plain TCP. */
  tls?: WireTls | null;
  maxFrame: number;
  log: Logger;
  /** Database for the entity id high-water mark; null keeps it in memory. */
  kv: Db | null;
  /** The game's entity types: spawn requests' properties are checked against them. */
  registry: EntityRegistry;
  /** Bounds of the default space, and the NPCs asked for in it (`--npcs`, told to the game's spaceCreated hook). */
  defaultSpace: { bounds: Rect; npcs: number };
  /** The game's say on what a space it makes holds (core/game.ts); none leaves new spaces empty. */
  spaceCreated?: SpaceCreatedHook;
  /** The cellappmgr's own game and its reloads; without it POST /api/game/reload answers 503. */
  game?: GameReloader;
  /** The game's navigation geometry of a space it makes (core/game.ts); none: only what creation names. */
  spaceGeometry?: SpaceGeometryHook;
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
  /** No balanced cell becomes narrower than this (m, default 10): the ghost radius is no floor. */
  minCellWidth?: number;
  /** A space gains a cell while its cellapps' mean load is above this (default 0.8 of a core). */
  balanceAddAbove?: number;
  /** A space retires a cell balancing added while its cells' mean load is below this (default 0.2). */
  balanceRetireBelow?: number;
  /** The cellapps' ghost radius (m): a space's default ghost radius. */
  ghostRadius?: number;
  /** The cellapps' AoI radius (m): a space's default. */
  aoiRadius?: number;
}

/** Silence after which a member is declared dead, unless configured. */
const DEAD_AFTER_MS = 2000;
/** How long after its own stall ended a member this cellappmgr loses is taken to have given up on its silence. */
const STALL_GRACE_MS = 5000;
/** How long such members are waited for (they dial again within RETRY_MAX_MS, then register). */
const STALL_REJOIN_MS = 5000;

/** Longest a cellappmgr cut off from most of its members keeps waiting for them before declaring them dead. */
const ISOLATION_HOLD_MS = 60_000;

/**
 * Whether `m`, lost to silence, went silent together with most members: at least two, and more than half of all
 * that were ever seen working (sent a heartbeat), have not been heard for half the dead timeout.
 */
function cutOffFromMost(registry: Registry, m: Member, reason: string, deadAfterMs: number): boolean {
  if (!reason.includes("missed heartbeats") || m.heartbeats === 0) return false;
  const now = performance.now();
  let quiet = 1, working = 1;
  for (const o of registry.members.values()) {
    if (o.heartbeats === 0) continue;
    working++;
    if (now - o.channel.lastReceivedAt > deadAfterMs / 2) quiet++;
  }
  return quiet >= 2 && quiet * 2 > working;
}

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
  /** Resolves when a cluster shutdown begins (POST /api/shutdown). */
  readonly shutdownBegun: Promise<void>;
  /** Where each cellapp backs up its NPCs. */
  readonly buddies: Buddies;
  /** The global store of base scripts, which it orders (base_scripts.ts). */
  readonly globals: GlobalStore;
  /** Moves partitions with the load, adds and retires cells. */
  readonly balancer: Balancer;
  #log: Logger;
  #ids: IdAllocator;
  #opts: CellAppMgrOptions;
  #shuttingDown = false;
  #resolveShutdown!: () => void;
  #resolveShutdownBegun!: () => void;
  #rejoin: RejoinWindow;
  /** GET /metrics: its own figures and every member's. */
  readonly #metrics: MetricsGatherer;
  readonly #defaultSpace: DefaultSpace;
  readonly #membership: Membership;
  readonly #admin: AdminOps;
  readonly #reloads: ClusterReload | null;

  private constructor(opts: CellAppMgrOptions, ids: IdAllocator) {
    this.#opts = opts;
    this.#log = opts.log;
    this.#ids = ids;
    this.#metrics = new MetricsGatherer(new ProcessMetrics(), opts.log);
    this.registry = new Registry(opts.log);
    this.#reloads = opts.game ? new ClusterReload(this.registry, opts.game, opts.log) : null;
    this.buddies = new Buddies(this.registry, opts.log);
    this.spaces = new Spaces(this.registry, opts.log, (n) => this.#ids.allocate(n));
    this.spaces.settingsDefaults = spaceSettingsIn(opts, SPACE_SETTINGS_DEFAULTS);
    this.spaces.geometryHook = opts.spaceGeometry ?? null;
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
        minWidth: opts.minCellWidth ?? DEFAULT_MIN_CELL_WIDTH,
        plan: {
          ...(opts.balanceAddAbove !== undefined ? { addAbove: opts.balanceAddAbove } : {}),
          ...(opts.balanceRetireBelow !== undefined ? { retireBelow: opts.balanceRetireBelow } : {}),
        },
        log: opts.log,
      },
    );
    this.shutdownDone = new Promise((r) => (this.#resolveShutdown = r));
    this.shutdownBegun = new Promise((r) => (this.#resolveShutdownBegun = r));
    const shuttingDown = () => this.#shuttingDown;
    const saveDrainsNow = () => void saveDrains(this.#opts.kv, this.spaces.draining, this.#log);
    const gameEntitiesOf = (bounds: Rect, isDefault: boolean, npcs: number) =>
      this.#gameEntities(bounds, isDefault, npcs);
    this.#defaultSpace = new DefaultSpace({
      spaces: this.spaces,
      registry: this.registry,
      log: opts.log,
      bounds: opts.defaultSpace.bounds,
      npcs: opts.defaultSpace.npcs,
      held: () => this.#shuttingDown || this.#rejoin.isOpen,
      gameEntities: gameEntitiesOf,
    });
    this.#membership = new Membership({
      registry: this.registry,
      spaces: this.spaces,
      buddies: this.buddies,
      balancer: this.balancer,
      defaultSpace: this.#defaultSpace,
      log: opts.log,
      rejoinOpen: () => this.#rejoin.isOpen,
      shuttingDown,
      saveDrains: saveDrainsNow,
      nextEntityId: () => this.#ids.next,
    });
    this.#rejoin = new RejoinWindow(opts.rejoinWindowMs ?? REJOIN_WINDOW_MS, () => this.#membership.rejoined(), {
      // Cut off from most of its members, this cellappmgr waits for them rather than give away what they hold.
      stayOpen: () => {
        const away = this.#membership.awaited;
        const working = [...this.registry.members.values()].filter((m) => m.heartbeats > 0).length;
        return away >= 2 && away * 2 > away + working;
      },
      maxMs: ISOLATION_HOLD_MS,
    });
    const rejoin = this.#rejoin;
    this.#metrics.own.registry.sampled(
      "seamless_mgr_rejoin_waiting",
      "Requests waiting for the rejoin window to close (registrations of new processes, placements, spawns)",
      "gauge",
      () => [{ labels: {}, value: rejoin.waiting }],
    );
    const deadAfterMs = opts.deadAfterMs ?? DEAD_AFTER_MS;
    this.registry.leavingExpected = () => this.#shuttingDown;
    this.registry.isHeld = (m, reason) => {
      if (this.#shuttingDown) return false;
      // A member lost while this process itself was stalled may only have given up on its silence, and when most
      // members fall silent at once, this process is the one cut off: they are waited for as after a restart (the
      // rejoin window) and may come back unfenced, with what they hold (docs/faults.md).
      const stalled = this.#metrics.own.loop.stalled(deadAfterMs / 2, STALL_GRACE_MS);
      const cutOff = !stalled && cutOffFromMost(this.registry, m, reason, deadAfterMs);
      if (stalled || cutOff) {
        if (!this.#rejoin.isOpen) {
          this.#log.warn(
            stalled
              ? `this cellappmgr stalled: members it lost meanwhile may rejoin`
              : `${m.role} ${m.id} and most other members fell silent at once: this cellappmgr takes itself for cut ` +
                `off and waits up to ${ISOLATION_HOLD_MS / 1000} s for them to rejoin`,
          );
        }
        this.#rejoin.reopen(Math.max(opts.rejoinWindowMs ?? REJOIN_WINDOW_MS, STALL_REJOIN_MS));
      }
      return this.#rejoin.isOpen;
    };
    this.registry.onChange = (m, event, reason) => this.#membership.changed(m, event, reason);
    const ensureDefaultSpace = () => this.#defaultSpace.ensure();
    const cellEntityHost: CellEntityHost = {
      registry: this.registry,
      spaces: this.spaces,
      rejoin: this.#rejoin,
      log: opts.log,
      ensureDefaultSpace,
      gameEntities: gameEntitiesOf,
    };
    const handlers = mgrHandlers({
      registry: this.registry,
      spaces: this.spaces,
      ids: this.#ids,
      rejoin: this.#rejoin,
      log: opts.log,
      deadAfterMs: opts.deadAfterMs ?? DEAD_AFTER_MS,
      shuttingDown,
      ensureDefaultSpace,
      createCellEntity: (spec: CellEntitySpec) => createCellEntity(cellEntityHost, spec),
      placeCellEntity: (spec: CellEntitySpec, req: CellPlaceRequest) => placeCellEntity(cellEntityHost, spec, req),
    });
    this.globals = serveBaseScripts(
      handlers,
      this.registry,
      (ch, what) => memberOn(this.registry, ch, what),
      this.#log,
    );
    this.#admin = new AdminOps({
      registry: this.registry,
      spaces: this.spaces,
      balancer: this.balancer,
      log: opts.log,
      metrics: this.#metrics,
      spawnGuard: new SpawnGuard({
        registry: opts.registry,
        held: () => this.spaces.entityCount(),
        spawnLimit: opts.spawnLimit ?? 10_000,
        entityLimit: opts.entityLimit ?? 100_000,
      }),
      rejoin: this.#rejoin,
      startedAt: this.startedAt,
      address: () => this.address,
      shuttingDown,
      saveDrains: saveDrainsNow,
      gameEntities: gameEntitiesOf,
    });
    this.server = new WireServer({
      host: opts.host,
      port: opts.port,
      role: "cellappmgr",
      acceptRoles: ["cellapp", "baseapp"],
      secret: opts.secret,
      tls: opts.tls ?? null,
      maxFrame: opts.maxFrame,
      heartbeatMs: opts.heartbeatMs ?? 500,
      deadAfterMs: opts.deadAfterMs ?? DEAD_AFTER_MS,
      handlers,
      log: opts.log,
    });
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

  #gameEntities(bounds: Rect, isDefault: boolean, npcs: number): SpaceEntities[] {
    return gameEntities(this.#opts.spaceCreated, this.#opts.registry, this.#log, { bounds, isDefault, npcs });
  }

  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void {
    return this.#membership.onProcessChange(listener);
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
      this.#resolveShutdownBegun();
      this.balancer.stop();
      this.#log.info(`cluster shutdown requested: stopping ${count} processes`);
      stopCluster(this.registry, this.#log).finally(() => this.#resolveShutdown());
    }
    return { stopping: true, processes: count };
  }

  /**
   * A game reload (game_reload.ts), as the cellappmgr's own part: its entity types adopt the new definitions in
   * place and new spaces get what the new game puts in them.
   */
  swapGame(next: Game): void {
    this.#opts.registry.adopt(next.registry);
    this.#opts.spaceCreated = next.spaceCreated;
  }

  /** POST /api/game/reload: every process loads the game again and swaps it in, or none does. */
  reloadGame(): Promise<GameReloadView> {
    if (!this.#reloads) throw new RequestError("unavailable", "this cellappmgr runs no reloadable game");
    if (this.#shuttingDown) throw new RequestError("unavailable", "the cluster is shutting down");
    return this.#reloads.reload();
  }

  /** Stops serving: closes every channel and the listener. */
  close(): void {
    this.#metrics.own.close();
    this.balancer.stop();
    this.#rejoin.dispose();
    this.server.close("cellappmgr stopping");
  }

  // The admin API's operations (admin_ops.ts).

  /** GET /api/health. */
  health(): HealthView {
    return this.#admin.health();
  }

  /** GET /api/cluster: this process first, then every registered one. */
  cluster(): ClusterView {
    const view = this.#admin.cluster();
    if (this.#opts.game) view.processes[0].game = { ...this.#opts.game.view };
    return view;
  }

  /** GET /metrics: Prometheus text from this process and every registered one, labelled with role and id. */
  metrics(): Promise<string> {
    return this.#admin.metrics();
  }

  /** GET /api/spaces. */
  listSpaces(): SpaceSummaryView[] {
    return this.#admin.listSpaces();
  }

  /** GET /api/spaces/:id. */
  getSpace(id: number): SpaceView {
    return this.#admin.getSpace(id);
  }

  /** PATCH /api/spaces/:id: switches the space's balancing on or off, changes its AoI and ghost radius. */
  patchSpace(id: number, body: PatchSpaceBody): SpaceView {
    return this.#admin.patchSpace(id, body);
  }

  /** POST /api/cellapps/:id/retire: drains a cellapp; its cells shrink to nothing and their entities move out. */
  retireCellApp(id: number): RetireView {
    return this.#admin.retireCellApp(id);
  }

  /** POST /api/spaces (the body is validated by the admin API). */
  createSpace(body: CreateSpaceBody): Promise<{ id: number }> {
    return this.#admin.createSpace(body);
  }

  /** POST /api/spaces/:id/entities: spawns into a space, at a point when one is given. */
  spawnInto(id: number, body: SpawnBody): Promise<{ spawned: number }> {
    return this.#admin.spawnInto(id, body);
  }

  /** DELETE /api/spaces/:id. */
  deleteSpace(id: number): { id: number; shuttingDown: true } {
    return this.#admin.deleteSpace(id);
  }

  /** GET /api/cellapps/:id. */
  getCellApp(id: number): CellAppView {
    return this.#admin.getCellApp(id);
  }

  /** GET /api/cellapps/:id/cells/:spaceId: asks the cellapp for the cell's entities. */
  getCell(cellappId: number, spaceId: number): Promise<CellEntityView[]> {
    return this.#admin.getCell(cellappId, spaceId);
  }

  /** GET /api/entities/:id: asks every cellapp, the one holding the real answers. */
  findEntity(id: number): Promise<EntityView> {
    return this.#admin.findEntity(id);
  }

  /** POST /api/processes/:id/shutdown (process_control.ts). */
  shutdownProcess(id: number, force: boolean): ProcessShutdownView {
    return this.#admin.shutdownProcess(id, force);
  }

  /** An entity with its cell properties (the admin watch socket's entity topic). */
  inspectEntity(id: number): Promise<EntityInspectView> {
    return this.#admin.inspectEntity(id);
  }

  /** GET /api/players (players.ts). */
  players(): Promise<PlayersView> {
    return this.#admin.players();
  }

  /** POST /api/players/:name/kick (players.ts). */
  kickPlayer(name: string, reason: string): Promise<KickView> {
    return this.#admin.kickPlayer(name, reason);
  }
}
