import { errorText } from "../core/errors.ts";
import type { Config } from "../core/config/mod.ts";
import { moveTrace } from "../core/trace.ts";
import { type Logger, Throttle } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { EntityIdPool } from "../core/id_pool.ts";
import { BusyMeter } from "../core/busy.ts";
import type { ProcessMetrics } from "../core/metrics.ts";
import { cellAppMetrics } from "./metrics.ts";
import {
  BackupMsg,
  BaseBackupMsg,
  BaseMsg,
  BaseScriptMsg,
  CellMsg,
  type Channel,
  MAX_LOAD,
  type MessageDef,
  MgrLease,
  MgrMsg,
  type RecordsDef,
  RestoreMsg,
  type SpaceGeometry,
  writeCellBackup,
  writeNpcBackup,
} from "../core/wire/mod.ts";
import type { ByteWriter } from "../core/bytes/mod.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import type { CellScriptClass } from "../core/script.ts";
import { swapCellGame } from "./game_swap.ts";
import { Cell } from "./cell.ts";
import type { CellHost } from "./cell_host.ts";
import { configureSpaceAoI, type WitnessOptions } from "./witness/mod.ts";
import { GHOST_DEFAULTS } from "./borders/mod.ts";
import { AOI_HYSTERESIS } from "../core/config/mod.ts";
import { cellRects } from "../core/geo/mod.ts";
import { rectFromArray } from "../core/geo/mod.ts";
import { Loopback } from "./loopback.ts";
import { ClientTraffic } from "./client_traffic.ts";
import { cellKey, cellsOfSpace } from "./cell_table.ts";
import { Authority, dropAllCells, gateHandlers } from "./fence.ts";
import { Orphans } from "./orphans.ts";
import { cellBases, serveBaseCalls } from "./base_calls.ts";
import { BackupSender, BuddyStore } from "./backup/mod.ts";
import { history } from "../core/history.ts";
import { NavMeshes } from "./nav/mod.ts";
import { serveCellApp } from "./cellapp_handlers.ts";
import { tickCells } from "./cellapp_tick.ts";

/**
 * A fault injection for tests only (SEAMLESS_FAULT_NO_FENCE=1): the cellapp ticks after a stall without the
 * cellappmgr's word and keeps its cells when fenced, so that tests can show what fencing prevents (two reals of
 * one entity, caught by tools/history/).
 */
const FAULT_NO_FENCE = Deno.env.get("SEAMLESS_FAULT_NO_FENCE") === "1";

/** What a cellapp runs: the entity types and their cell scripts. */
export interface CellAppGame {
  registry: EntityRegistry;
  scripts: Readonly<Record<string, CellScriptClass>>;
}

/**
 * The messages that act on this cellapp's reals: they wait while its cells may not act (fence.ts). Ghost updates,
 * the cellappmgr's geometry and buddies' backups are taken at once: they change no real.
 */
export const ACTING: readonly MessageDef<unknown[], unknown>[] = [
  CellMsg.entityCall,
  BaseScriptMsg.cellCall,
  BaseScriptMsg.cellTeleport,
  CellMsg.enableWitness,
  CellMsg.clientAoi,
  CellMsg.disableWitness,
  CellMsg.clientCall,
  CellMsg.clientPosition,
  CellMsg.clientMoves,
  CellMsg.destroyCellEntity,
  CellMsg.cellPersistentState,
  CellMsg.createCellEntity,
  CellMsg.spawn,
  CellMsg.offload,
  CellMsg.teleportIn,
  CellMsg.handOverWrites,
  CellMsg.ghostResync,
  RestoreMsg.restoreEntity,
  RestoreMsg.cellAppDied,
  BaseBackupMsg.rebase,
] as readonly MessageDef<unknown[], unknown>[];

/**
 * The acting messages about one client's entity (its id first; a client call names its target second): they apply
 * only those entities' waiting moves before they run (move_queue.ts); a client's answers to its witness need none
 * (they read no position), and the other acting messages apply all of them.
 */
export function movesBefore(def: MessageDef<unknown[], unknown>, args: unknown[]): readonly number[] | null {
  switch (def.kind) {
    case CellMsg.clientCall.kind:
      return [args[0] as number, args[1] as number];
    case CellMsg.clientAoi.kind:
      return [];
    case CellMsg.enableWitness.kind:
    case CellMsg.disableWitness.kind:
    case CellMsg.clientPosition.kind:
    case CellMsg.destroyCellEntity.kind:
    case CellMsg.cellPersistentState.kind:
      return [args[0] as number];
    default:
      return null;
  }
}

/**
 * How long before a tick, as a share of the period, the client moves waiting are applied (move_queue.ts): off the
 * tick's path, and late enough that most of a period's moves go in one batch.
 */
const MOVES_LEAD = 1 / 8;

/** Ticks per second unless configured. */
export const DEFAULT_TICK_HZ = 10;

/**
 * A cellapp process: hosts cells of spaces (several of one space, possibly),
 * ticks them at a fixed rate against a tick budget, and reports its load to
 * the cellappmgr each second. Messages between two of its cells go through a
 * loopback instead of the network.
 */
export class CellApp {
  readonly member: MemberProcess;
  /** The cells by `cellKey(spaceId, cellId)`. */
  readonly cells: Map<string, Cell> = new Map();
  /** Its figures for GET /metrics, read from the cells when the cellappmgr asks. */
  readonly metrics: ProcessMetrics = cellAppMetrics(this.cells, () => this.member.peers.traffic());
  readonly ids: EntityIdPool;
  readonly periodMs: number;
  #log: Logger;
  #game: CellAppGame;
  #host: CellHost;
  /** Busy share of wall time: ticks and the messages handled between them. */
  readonly #busy = new BusyMeter();

  readonly #ghostRadius: number;
  #aoi: WitnessOptions;
  #tickTimer: ReturnType<typeof setTimeout> | undefined;
  /** Applies the client moves waiting a little before the tick, so that few are left for the tick to apply. */
  #movesTimer: ReturnType<typeof setTimeout> | undefined;
  #reportTimer: ReturnType<typeof setInterval> | undefined;
  #nextTickAt = 0;
  #lastTickAt = 0;
  #stopped = false;
  #loopback: Loopback;
  /** Messages that cannot reach a peer are logged at most once a minute per address. */
  #lostLog = new Throttle(60_000);
  /** What baseapps send for their clients. */
  #clients: ClientTraffic;
  /** The addresses the cellappmgr announces this cellapp under (its own, or the one its connection came from). */
  #selfAddresses = new Set<string>();
  /** Whether the cells may act: not while the cellappmgr may have declared this cellapp dead. */
  #authority: Authority;
  /** The cells' lease, renewed by the cellappmgr's answers (core/wire/lease.ts). */
  readonly lease: MgrLease;
  /** Cell entities whose baseapp died, waiting to be adopted. */
  readonly orphans: Orphans;
  /** Each real's cell backup, once per backup period, to its base (or, without one, to the buddy). */
  readonly backups: BackupSender;
  /** The NPC backups of the cellapps whose buddy this one is. */
  readonly buddyStore: BuddyStore = new BuddyStore();
  /** The navigation meshes of its spaces, one per geometry file, shared by their cells here. */
  readonly navMeshes: NavMeshes = new NavMeshes();

  constructor(cfg: Config, log: Logger, game: CellAppGame, tickHz = DEFAULT_TICK_HZ) {
    this.#ghostRadius = cfg.ghostRadius;
    this.#log = log;
    this.#game = game;
    this.periodMs = 1000 / tickHz;
    this.ids = new EntityIdPool(() => this.member.link.channel, log);
    this.member = startMember(
      "cellapp",
      cfg,
      log,
      () => this.#busy.sample(),
      undefined,
      () => this.ids.highWater,
      () => this.#spaces(),
    );
    this.#loopback = new Loopback((def, args) => {
      const handler = this.member.handlers.get(def.kind);
      if (!handler) throw new Error(`${def.name} is not served here`);
      // Cell-to-cell handlers do not look at the channel.
      return handler(null as unknown as Channel, ...args);
    }, (e) => log.warn(`a message between cells of this cellapp failed: ${e.message}`));
    const link = this.member.link;
    const bases = cellBases({
      peer: (address) => this.member.peers.get(address),
      mgr: () => this.member.link.channel,
      timeoutMs: GHOST_DEFAULTS.callTimeoutMs,
    });
    this.#host = {
      registry: game.registry,
      scripts: game.scripts,
      log,
      budgetMs: this.periodMs,
      navMeshes: this.navMeshes,
      // A script goes on from an answer only while the cells may act (fence.ts).
      bases: {
        call: (e, method, args) =>
          this.#authority.settle(`the answer to ${e.type.name} ${e.id}.base.${method}`, bases.call(e, method, args)),
        createBaseAnywhere: (typeName, props) =>
          this.#authority.settle(
            `the answer to createBaseAnywhere ${typeName}`,
            bases.createBaseAnywhere(typeName, props),
          ),
        clientMessage: (player, method, args) =>
          this.#authority.settle(
            `the answer to clientOf(${player.id}).${method}`,
            bases.clientMessage(player, method, args),
          ),
      },
      newEntityId: () => this.ids.take(),
      requestShutDown: (spaceId, why) => {
        const ch = this.member.link.channel;
        if (ch) ch.send(MgrMsg.requestShutDownSpace, spaceId, why);
        else log.warn(`cannot ask for space ${spaceId} to shut down (${why}): the cellappmgr is not reachable`);
      },
      setSpaceSettings: (spaceId, change) => {
        const ch = this.member.link.channel;
        if (!ch) return Promise.reject(new Error("the cellappmgr is not reachable"));
        return ch.request(MgrMsg.setSpaceSettings, spaceId, change);
      },
      cellGone: (spaceId, cellId) => {
        const gone = this.cells.get(cellKey(spaceId, cellId));
        gone?.dispose();
        this.cells.delete(cellKey(spaceId, cellId));
        const geometry = gone?.geometry.navGeometry;
        if (geometry && ![...this.cells.values()].some((c) => c.geometry.navGeometry === geometry)) {
          this.navMeshes.release(geometry);
        }
      },
      cellEntityDestroyed: (e, reason) => this.#toBase(e.baseAddress!, BaseMsg.cellEntityDestroyed, e.id, reason),
      cellEntityMoved: (e, address, spaceId = e.cell.spaceId) =>
        this.#toBase(e.baseAddress!, BaseMsg.cellEntityMoved, e.id, spaceId, address, e.epoch),
      entityTeleported: (e, spaceId, p) => {
        const position: [number, number, number] = [p.x, p.y, p.z];
        this.#toBase(e.baseAddress!, BaseMsg.teleported, e.id, e.epoch, spaceId, position, [e.yaw, e.pitch, e.roll]);
      },
      findCell: (spaceId, x, z) => {
        const ch = this.member.link.channel;
        if (!ch) return Promise.reject(new Error("the cellappmgr is not reachable"));
        return ch.request(MgrMsg.findCell, spaceId, x, z);
      },
      clientSink: (e) => e.baseAddress === null ? undefined : this.#clients.sink(e),
      clientError: (e, code, about, message) => {
        if (e.baseAddress !== null) this.#clients.refuse(e.baseAddress, e.id, code, about, message);
      },
      ghosting: {
        config: { ...GHOST_DEFAULTS, ghostRadius: cfg.ghostRadius, restoreTimeoutMs: cfg.restoreTimeoutMs },
        get address() {
          return link.address;
        },
        send: (address, def, ...args) => this.#toPeer(address, def, ...args),
        ghostRecord: (address) =>
          this.#isSelf(address) ? null : this.member.peers.peek(address)?.record(CellMsg.ghostSyncs, 0) ?? null,
        // Synchronous when a channel is open, so a request keeps its place among messages sent after it.
        ask: (address, timeoutMs, def, ...args) => {
          const asked = this.#isSelf(address)
            ? this.#loopback.ask(def, args)
            : this.member.peers.peek(address)?.requestWithin(timeoutMs, def, ...args) ??
              this.member.peers.get(address).then((c) => c.requestWithin(timeoutMs, def, ...args));
          // A script awaits an entity call's answer: it goes on only while the cells may act (fence.ts).
          return def.kind === CellMsg.entityCall.kind
            ? this.#authority.settle(`the answer to ${def.name}`, asked)
            : asked;
        },
      },
    };
    this.#aoi = { aoiRadius: cfg.aoiRadius, hysteresis: AOI_HYSTERESIS };
    this.#clients = new ClientTraffic({
      cells: this.cells,
      log,
      channelTo: (address) =>
        this.orphans.isDead(address) || this.#isSelf(address) ? undefined : this.member.peers.peek(address),
      toPeer: (address, def, ...args) => this.#toPeer(address, def, ...args),
      ask: async (address, def, ...args) => await (await this.member.peers.get(address)).request(def, ...args),
      isSelf: (address) => this.#isSelf(address),
      generation: () => this.member.link.generation,
      baseGone: (address) => this.orphans.isDead(address),
    });
    this.lease = new MgrLease(this.member.link, cfg.mgrLeaseMs, log, "cellapp");
    this.#authority = new Authority(this.member.link, this.lease, log, () => this.cells.size);
    this.member.link.onFenced = (why) => {
      if (FAULT_NO_FENCE) return log.error(`fenced: ${why}; keeping every cell (SEAMLESS_FAULT_NO_FENCE)`);
      history.dropAll("fenced");
      const dropped = dropAllCells(this.cells);
      this.#authority.dropped(`the cellappmgr gave this cellapp's cells to others (${why})`);
      log.error(
        `fenced: ${why}. Dropped ${dropped.cells} cell(s) with ${dropped.reals} real entities and ` +
          `${dropped.ghosts} ghosts (others hold them now); registering again as a new, empty cellapp`,
      );
    };
    this.orphans = new Orphans({
      cells: this.cells,
      log,
      connected: (address) => this.member.peers.peek(address) !== undefined,
      dial: (address) => this.member.peers.get(address),
      timeoutMs: cfg.orphanTimeoutSec * 1000,
    });
    this.backups = new BackupSender({
      // Batched per tick as records when a channel is open (cell_backup_records.ts, npc_backup_records.ts).
      toBase: (address, id, backup) => {
        const w = this.orphans.isDead(address) ? null : this.#recordTo(address, BackupMsg.cellBackups);
        if (w) writeCellBackup(w, id, backup);
        else this.#toBase(address, BackupMsg.cellBackup, id, backup);
      },
      toBuddy: (address, backup) => {
        const w = this.#recordTo(address, BackupMsg.npcBackups);
        if (w) writeNpcBackup(w, backup);
        else this.#toPeer(address, BackupMsg.npcBackup, backup);
      },
    }, this.periodMs);
    this.buddyStore.onRefused = (why) => log.warn(why);
    this.#serve();
    // Inside the gate: a message held back by the fence applies the moves before it when it is let through.
    this.#clients.moves.before(this.member.handlers, ACTING.filter((d) => d !== CellMsg.clientMoves), movesBefore);
    gateHandlers(this.member.handlers, ACTING, this.#authority);
    this.member.link.onRegistered = () => {
      this.#authority.registered();
      this.ids.ensure().catch((e) => log.warn(`could not get entity ids: ${e.message}`));
    };
    this.#lastTickAt = performance.now();
    this.#nextTickAt = this.#onBeat(this.#lastTickAt) - this.periodMs;
    this.#scheduleTick();
    this.#reportTimer = setInterval(() => this.#report(), 1000);
  }

  #serve(): void {
    this.#clients.serve(this.member.handlers);
    serveBaseCalls(this.member.handlers, this.cells);
    serveCellApp({
      handlers: this.member.handlers,
      link: this.member.link,
      cells: this.cells,
      metrics: this.metrics,
      navMeshes: this.navMeshes,
      orphans: this.orphans,
      backups: this.backups,
      buddyStore: this.buddyStore,
      log: this.#log,
      applyGeometry: (g, create) => this.#applyGeometry(g, create),
    });
  }

  /** Creates the cells of `g` this cellapp runs that it does not have yet (when `create`), updates the others. */
  #applyGeometry(g: SpaceGeometry, create: boolean): void {
    const self = this.member.link.id;
    for (const [id, address] of g.cellapps ?? []) if (id === self) this.#selfAddresses.add(address);
    for (const cell of cellsOfSpace(this.cells, g.spaceId)) cell.updateGeometry(g);
    if (g.navGeometry && !this.navMeshes.has(g.navGeometry)) {
      // A cell made by balancing or for a restore: walks carry their paths, queries wait for the mesh.
      this.navMeshes.load(g.navGeometry).catch((e) => this.#log.error(`space ${g.spaceId}: ${errorText(e)}`));
    }
    if (self === null) {
      if (create) throw new Error("this cellapp is not registered yet");
      return;
    }
    for (const c of cellRects(g.tree, rectFromArray(g.bounds))) {
      if (c.cellapp !== self || this.cells.has(cellKey(g.spaceId, c.id))) continue;
      const cell = new Cell(this.#host, g, self, c.id);
      configureSpaceAoI(cell, g.aoiRadius != null ? { ...this.#aoi, aoiRadius: g.aoiRadius } : this.#aoi);
      this.cells.set(cellKey(g.spaceId, c.id), cell);
      this.#log.info(`cell ${c.id} of space ${g.spaceId} created`, { space: g.spaceId });
    }
  }

  /** The geometry of each space this cellapp runs cells of (not those shutting down), for a (re-)registration. */
  #spaces(): SpaceGeometry[] {
    const spaces = new Map<number, SpaceGeometry>();
    for (const c of this.cells.values()) if (!c.shuttingDown) spaces.set(c.spaceId, c.geometry);
    return [...spaces.values()];
  }

  /** Sends to a baseapp (see #toPeer). */
  #toBase<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void {
    this.#toPeer(address, def, ...args);
  }

  /**
   * Sends to another process by address, dialling it when no channel is open. Arguments are encoded at once, into
   * the channel or, while it is dialled, into its bounded backlog (core/wire/peers.ts).
   */
  #toPeer<A extends unknown[]>(address: string, def: MessageDef<A, unknown>, ...args: A): void {
    // A baseapp found dead: its orphans' traffic has nobody to go to, and was logged once.
    if (this.orphans.isDead(address)) return;
    if (this.#isSelf(address)) {
      this.#loopback.send(def, args);
      return;
    }
    this.member.peers.send(address, def, args, (e) => {
      const held = this.#lostLog.take(address);
      if (held !== null) {
        this.#log.warn(`${def.name} to ${address} lost: ${errorText(e)}${Throttle.note(held)}`);
      }
    });
  }

  /** A record of `def` in this tick's batch to the peer at `address`, or null when no channel to it is open. */
  #recordTo(address: string, def: RecordsDef): ByteWriter | null {
    return this.#isSelf(address) ? null : this.member.peers.peek(address)?.record(def, 0) ?? null;
  }

  /** Whether `address` is this cellapp's: messages to it go through the loopback. */
  #isSelf(address: string): boolean {
    return address === this.address || address === this.member.server.address || this.#selfAddresses.has(address);
  }

  /** The address other processes reach this cellapp on (as the cellappmgr lists it, once registered). */
  get address(): string {
    return this.member.link.address;
  }

  #scheduleTick(): void {
    if (this.#stopped) return;
    this.#nextTickAt += this.periodMs;
    const now = performance.now();
    // After a stall, start counting again from now rather than ticking in a burst.
    if (this.#nextTickAt < now - this.periodMs) this.#nextTickAt = this.#onBeat(now);
    this.#tickTimer = setTimeout(() => this.#tick(), Math.max(0, this.#nextTickAt - now));
    const lead = this.#nextTickAt - now - this.periodMs * MOVES_LEAD;
    if (lead > 0) {
      this.#movesTimer = setTimeout(() => {
        if (this.#authority.runsNow) this.#clients.moves.flush();
      }, lead);
    }
  }

  /**
   * The first tick time from `t` (performance.now() time) on that falls on a multiple of the period in wall-clock
   * time. Every cellapp ticks in the same phase, so what its neighbours send at the end of their ticks arrives at
   * about the same time, and is read in one wake-up of its event loop rather than one per neighbour.
   */
  #onBeat(t: number): number {
    const wall = performance.timeOrigin + t;
    return Math.ceil(wall / this.periodMs) * this.periodMs - performance.timeOrigin;
  }

  #tick(): void {
    const start = performance.now();
    const gap = start - this.#lastTickAt;
    const dt = Math.min(gap, 4 * this.periodMs);
    this.#lastTickAt = start;
    const holds = this.#authority.holds(gap) || FAULT_NO_FENCE;
    history.acting(holds);
    if (!holds) return this.#scheduleTick();
    if (moveTrace.on) moveTrace.tick(performance.timeOrigin + start);
    this.#clients.moves.flush();
    tickCells<Cell>(this.cells, this.backups, dt, this.#log);
    this.#scheduleTick();
  }

  #report(): void {
    this.orphans.sweep();
    const ch = this.member.link.channel;
    if (!ch) return;
    const now = performance.now();
    try {
      ch.send(MgrMsg.loadReport, {
        load: Math.min(Math.round(this.#busy.sample(now) * 1000) / 1000, MAX_LOAD),
        peerBytesOut: this.member.peers.bytesOut,
        ghostRadius: this.#ghostRadius,
        cells: [...this.cells.values()].map((c) => c.report(now)),
      });
      for (const c of this.cells.values()) c.recheckShutDown();
    } catch (e) {
      // A figure out of range would get this cellapp dropped; the report is skipped and the cause logged.
      this.#log.error(`load report not sent: ${errorText(e)}`);
    }
  }

  /** A game reload: `next`'s definitions and scripts for every cell and entity here, in place (game_swap.ts). */
  swapGame(next: CellAppGame): void {
    this.#game = next;
    swapCellGame(this.#host, this.cells.values(), next);
  }

  /** Stops ticking and serving; resolves once the cellappmgr has been told. */
  async close(reason: string): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#tickTimer);
    clearTimeout(this.#movesTimer);
    clearInterval(this.#reportTimer);
    this.lease.stop();
    for (const c of this.cells.values()) c.dispose();
    this.navMeshes.clear();
    this.metrics.close();
    await this.member.close(reason);
  }
}
