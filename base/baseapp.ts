import type { Config } from "../core/config.ts";
import { type Logger, Throttle } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { openKv } from "../core/kv.ts";
import { EntityIdPool } from "../core/id_pool.ts";
import { BusyMeter } from "../core/busy.ts";
import {
  BackupMsg,
  backupTarget,
  type BaseAppInfo,
  BaseBackupMsg,
  BaseMsg,
  BaseScriptMsg,
  PlayerMsg,
  ProcMsg,
  readFrames,
  RestoreMsg,
  sameAddress,
} from "../core/wire/mod.ts";
import {
  decodePersistentState,
  encodeOwnClientState,
  type EntityRegistry,
  type EntityType,
  PropertyContainer,
} from "../core/def/mod.ts";
import { C2S, type ClientMessage, CloseCode, S2C, type Vec3Tuple } from "../core/def/client_protocol.ts";
import { placeLogin, type Placement, type PlacementHook, serverPlacement } from "../core/placement.ts";
import { Autosave, DEFAULT_AUTOSAVE_SEC } from "./autosave.ts";
import { Accounts, type LoginCheck, type LoginLimits } from "./accounts.ts";
import { CellRoute } from "./cell_route.ts";
import { requestCellEntity } from "./cell_request.ts";
import { heldIdHighWater } from "./held_ids.ts";
import { type ClientEndpoint, serveClients } from "./client_endpoint.ts";
import { Proxy, type ProxyHost } from "./proxy.ts";
import type { BaseScripts } from "../core/base_script.ts";
import { BaseScriptRuntime } from "./scripts.ts";
import { BaseGlobals } from "./global_data.ts";
import { createBaseHere } from "./base_only.ts";
import { ClientSession, type SessionHost, type SessionLimits } from "./session.ts";
import { EntityStore, type StoredEntity } from "./storage.ts";
import { ResumeTokens, tokenNonce } from "./resume_token.ts";
import { BaseBackups } from "./base_backup.ts";
import { BaseAppMetrics, loginFailure } from "./metrics.ts";
import { type BaseRestoreHost, restoreBase } from "./base_restore.ts";
import { findBaseHolder } from "./resume_route.ts";
import { BaseAuthority, heldBackPeers } from "./fence.ts";
import type { PeerSource } from "./cell_route.ts";
import type { ResumeElsewhere } from "./session.ts";
import { kickPlayer, listPlayers } from "./players.ts";

/** How a baseapp serves clients; every field has a default. */
export interface BaseAppOptions {
  /** The game's entity types. */
  registry: EntityRegistry;
  /** Port of the client WebSocket endpoint (0 = a free one); it binds Config.host. */
  clientPort?: number;
  /** Create an account on its first login (default true; `--auto-accounts=false` forbids it). */
  autoCreateAccounts?: boolean;
  /** A custom login check run before the password check. */
  checkLogin?: LoginCheck | null;
  /** The entity type of a new account (default "Avatar"). */
  playerType?: string;
  /** The space of a new account's first login, and where a player goes whose space is gone (default 1). */
  defaultSpaceId?: number;
  /** Where in `defaultSpaceId` a new account's player first appears (default [0, 0, 0]). */
  spawnPoint?: Vec3Tuple;
  /** The game's say on where a login goes (core/placement.ts); the default lets a client choose nothing. */
  placement?: PlacementHook;
  /** Top speed of client-controlled movement in m/s (default 10). */
  maxSpeed?: number;
  /** Moves per second a client is expected to send (default 10); twice as many are dropped as abuse. */
  moveRate?: number;
  /** Milliseconds a proxy stays after its client went away (default 30,000). */
  disconnectGraceMs?: number;
  /** PBKDF2 iterations for new password hashes (default 100,000). */
  passwordIterations?: number;
  /** Login rate limits, back-off and the password hash queue (defaults: DEFAULT_LOGIN_LIMITS in login_guard.ts). */
  loginLimits?: Partial<LoginLimits>;
  /** The base script class of each entity type that has one (core/base_script.ts). */
  baseScripts?: BaseScripts;
  /** Milliseconds a base script's call to another process may take (default 5000). */
  callTimeoutMs?: number;
  limits?: Partial<SessionLimits>;
  /** Seconds between two saves of a logged-in entity, besides the save at logout (default 10). */
  autosaveSec?: number;
}

/** Session limits unless configured. */
export const DEFAULT_LIMITS: SessionLimits = {
  maxFrame: 64 * 1024,
  maxFrameBeforeLogin: 1024,
  abuseLimit: 10,
  loginTimeoutMs: 10_000,
  maxBuffered: 8 * 1024 * 1024,
};

/**
 * A baseapp process: joins the cluster, serves game clients over WebSocket,
 * holds their proxies, routes between client, base and cell, and persists
 * entities in Deno KV.
 */
export class BaseApp implements SessionHost {
  readonly member: MemberProcess;
  readonly kv: Deno.Kv;
  readonly registry: EntityRegistry;
  readonly log: Logger;
  readonly limits: SessionLimits;
  readonly ids: EntityIdPool;
  readonly accounts: Accounts;
  readonly store: EntityStore;
  /** Saves every proxy once per autosave period. */
  readonly autosave: Autosave;
  /** Backs every proxy up to another baseapp once per backup period, and holds the backups of others' bases. */
  readonly backups: BaseBackups;
  /** Whether this baseapp may act for its bases: held back after a stall until the cellappmgr confirms it. */
  readonly authority: BaseAuthority;
  /** The peers as the routes to cell entities see them: held back while `authority` doubts. */
  readonly #cellPeers: PeerSource;
  /** Proxies by entity id. */
  readonly proxies: Map<number, Proxy> = new Map();
  readonly sessions: Set<ClientSession> = new Set();
  /** Its figures for GET /metrics. */
  readonly metrics: BaseAppMetrics = new BaseAppMetrics(this.sessions);
  readonly #endpoint: ClientEndpoint;
  readonly #loading = new Map<number, Promise<{ proxy: Proxy; placement: Placement }>>();
  /** Busy share of wall time: client traffic, relaying, storage. */
  readonly #busy = new BusyMeter();
  readonly #opts: Required<
    Omit<
      BaseAppOptions,
      "limits" | "registry" | "checkLogin" | "clientPort" | "loginLimits" | "autosaveSec" | "callTimeoutMs"
    >
  >;
  readonly #proxyHost: ProxyHost;
  readonly #restoreHost: BaseRestoreHost;
  /** Client frames from cellapp generations declared dead, logged at most once a minute per generation. */
  readonly #staleLog = new Throttle(60_000);

  /** The base scripts: script objects, base method calls, calls between bases and to cells. */
  readonly scripts: BaseScriptRuntime;
  /** This baseapp's copy of the global store. */
  readonly globals: BaseGlobals;

  /** Signs and checks the resume tokens clients reconnect with. */
  readonly tokens: ResumeTokens;
  readonly #tokenTimer: ReturnType<typeof setInterval>;

  private constructor(
    cfg: Config,
    log: Logger,
    kv: Deno.Kv,
    opts: BaseAppOptions,
    heldIds: number,
    tokens: ResumeTokens,
    globals: BaseGlobals,
  ) {
    this.kv = kv;
    this.globals = globals;
    this.tokens = tokens;
    // A client holds a token that is still good when its connection is lost: each gets a new one in time.
    this.#tokenTimer = setInterval(() => {
      // Not after a stall: if this baseapp was fenced, a base restored elsewhere accepts only the token it backed up.
      if (!this.authority.mayAct()) return;
      for (const s of this.sessions) if (s.state === "online" && s.proxy) this.#sendToken(s, s.proxy);
    }, tokens.ttlMs / 2);
    this.log = log;
    this.registry = opts.registry;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.#opts = {
      autoCreateAccounts: opts.autoCreateAccounts ?? true,
      playerType: opts.playerType ?? "Avatar",
      defaultSpaceId: opts.defaultSpaceId ?? 1,
      spawnPoint: opts.spawnPoint ?? [0, 0, 0],
      placement: opts.placement ?? serverPlacement,
      maxSpeed: opts.maxSpeed ?? 10,
      moveRate: opts.moveRate ?? 10,
      disconnectGraceMs: opts.disconnectGraceMs ?? 30_000,
      passwordIterations: opts.passwordIterations ?? 100_000,
      baseScripts: opts.baseScripts ?? {},
    };
    const player = this.registry.get(this.#opts.playerType);
    if (!player.proxy) throw new Error(`playerType: ${player.name} is not a proxy (proxy: true in its definition)`);
    this.#endpoint = serveClients(cfg.host, opts.clientPort ?? 0, (ws, remote) => {
      this.sessions.add(new ClientSession(ws, remote, this));
    }, { headerTimeoutMs: cfg.headerTimeoutMs, publicHost: cfg.publicHost, log });
    this.ids = new EntityIdPool(() => this.member.link.channel, log, undefined, () => this.member.link.connected());
    // Ids this database holds are reported with the registration, so a cellappmgr never hands them out again.
    this.ids.noteHeld(heldIds);
    this.member = startMember(
      "baseapp",
      cfg,
      log,
      () => this.#busy.sample(),
      () => this.#endpoint.url,
      () => this.ids.highWater,
    );
    this.authority = new BaseAuthority(this.member.link, log);
    this.#cellPeers = heldBackPeers(this.authority, this.member.peers);
    // A reserve of ids, so that first logins go on while the cellappmgr is away.
    this.member.link.onRegistered = () => {
      this.authority.registered();
      this.ids.ensure().catch((e) => log.warn(`could not get entity ids: ${(e as Error).message}`));
      this.globals.sync().catch((e) => log.warn(`could not sync the global store: ${(e as Error).message}`));
    };
    this.member.link.onFenced = (why) => this.#fenced(why);
    this.store = new EntityStore(kv);
    this.store.onCommit = (seconds) => this.metrics.commit(seconds);
    this.autosave = new Autosave((opts.autosaveSec ?? DEFAULT_AUTOSAVE_SEC) * 1000, log);
    this.accounts = new Accounts(kv, {
      autoCreate: this.#opts.autoCreateAccounts,
      check: opts.checkLogin ?? null,
      iterations: this.#opts.passwordIterations,
      limits: opts.loginLimits,
      entityType: this.#opts.playerType,
      // Concurrent first logins each wait for an id of their own.
      newEntityId: () => this.ids.next(),
    });
    this.scripts = new BaseScriptRuntime(this.#opts.baseScripts, {
      log,
      address: this.member.server.address,
      globals,
      callTimeoutMs: opts.callTimeoutMs ?? 5000,
      local: (id) => this.proxies.get(id),
      others: () => this.backups.live.filter((b) => b.id !== this.member.link.id).map((b) => b.address),
      peer: (address) => this.member.peers.get(address),
      mgr: () => this.member.link.channel,
    });
    this.#proxyHost = {
      address: this.member.server.address,
      log,
      maxSpeed: this.#opts.maxSpeed,
      moveRate: this.#opts.moveRate,
      disconnectGraceMs: this.#opts.disconnectGraceMs,
      scripts: this.scripts,
      createCellEntity: async (spec, signal) => {
        await this.authority.confirmed();
        return await requestCellEntity(this.member.link, spec, signal, log);
      },
      // Nothing is written after a stall until the cellappmgr confirms this baseapp: it may have been fenced.
      save: async (id, e) => {
        await this.authority.confirmed();
        await this.store.save(id, e);
      },
      restoreCellEntity: async (backup) => {
        await this.authority.confirmed();
        const ch = this.member.link.channel;
        if (!ch) throw new Error("the cellappmgr is not reachable");
        return await ch.request(RestoreMsg.restoreCellEntity, backup, this.member.server.address, true);
      },
      removed: (p) => {
        this.autosave.remove(p);
        this.#dropBackup(p.id);
        if (this.proxies.get(p.id) === p) this.proxies.delete(p.id);
      },
    };
    this.#restoreHost = {
      log,
      registry: this.registry,
      has: (id) => this.proxies.has(id) || this.#loading.has(id),
      newProxy: (id, type, account, cellProps, position, direction) =>
        new Proxy(
          id,
          type,
          account,
          cellProps,
          new CellRoute(this.#cellPeers, log),
          this.#proxyHost,
          position,
          direction,
        ),
      hold: (proxy, nonce) => {
        this.proxies.set(proxy.id, proxy);
        this.autosave.add(proxy);
        if (proxy.type.proxy) this.backups.awaitResume(proxy.id, nonce);
        this.scripts.fire(proxy, "onCreated");
      },
      holds: (proxy) => this.proxies.get(proxy.id) === proxy,
      rebase: async (cellapp, id) =>
        await (await this.member.peers.get(cellapp)).request(BaseBackupMsg.rebase, id, this.address),
      spawn: () => this.#spawn(),
    };
    this.backups = new BaseBackups({
      log,
      selfId: () => this.member.link.id,
      bases: () => this.proxies.values(),
      send: async (address, backup) => {
        if (!this.authority.mayAct()) throw new Error("this baseapp stalled and awaits the cellappmgr's word");
        (await this.member.peers.get(address)).send(BaseBackupMsg.baseBackup, backup);
      },
    });
    this.#serve();
  }

  /** Opens the database, starts the client endpoint, then joins the cluster. */
  static async start(cfg: Config, log: Logger, opts: BaseAppOptions): Promise<BaseApp> {
    const kv = await openKv(cfg.kv);
    log.info(`Deno KV open at ${cfg.kv}`);
    let app: BaseApp | null = null;
    const globals = await BaseGlobals.open(kv, {
      log,
      mgr: () => app?.member.link.channel ?? null,
      changed: (key, value) => {
        for (const p of app?.proxies.values() ?? []) app!.scripts.fire(p, "onGlobalData", key, value);
      },
    });
    app = new BaseApp(
      cfg,
      log,
      kv,
      opts,
      await heldIdHighWater(kv),
      await ResumeTokens.open(kv, cfg.secret),
      globals,
    );
    log.info(`serving clients at ${app.clientUrl}`);
    return app;
  }

  /** The address other processes reach this baseapp on. */
  get address(): string {
    return this.member.server.address;
  }

  /** The WebSocket URL clients connect to. */
  get clientUrl(): string {
    return this.#endpoint.url;
  }

  #serve(): void {
    this.member.handlers
      .on(ProcMsg.metrics, () => this.metrics.families())
      .on(PlayerMsg.listPlayers, (_ch, max) => listPlayers(this.proxies.values(), max))
      .on(PlayerMsg.kickPlayer, (_ch, name, reason) => kickPlayer(this.proxies.values(), name, reason, this.log))
      .on(
        BaseMsg.cellEntityDestroyed,
        (ch, id, reason) => this.proxies.get(id)?.onCellDestroyed(reason, ch.peer.address),
      )
      .on(
        BaseMsg.clientError,
        (_ch, id, code, about, message) => this.proxies.get(id)?.cellRefused(code, about, message),
      )
      .on(
        BaseMsg.cellEntityMoved,
        (ch, id, spaceId, address, epoch) =>
          this.proxies.get(id)?.onCellMoved(epoch, spaceId, address, ch.peer.address),
      )
      .on(
        BaseMsg.teleported,
        (ch, id, epoch, spaceId, position, direction) =>
          this.proxies.get(id)?.onTeleported(epoch, spaceId, position, direction, ch.peer.address),
      )
      .on(BaseMsg.toClient, (ch, id, epoch, bytes, generation) => {
        if (this.member.link.isDead(generation)) return this.#staleFrame(ch.peer.address, id, generation);
        this.proxies.get(id)?.fromCell(epoch, bytes, ch.peer.address);
      })
      .on(BaseMsg.toClients, (ch, generation, records) => {
        const from = ch.peer.address, dead = this.member.link.isDead(generation);
        const bad = readFrames(records, (id, epoch, bytes) => {
          if (dead) this.#staleFrame(from, id, generation);
          else this.proxies.get(id)?.fromCell(epoch, bytes, from);
        });
        if (bad) ch.drop(`bad toClients: ${bad}`);
      })
      .on(BackupMsg.cellBackup, (ch, id, backup) => this.proxies.get(id)?.onCellBackup(backup, ch.peer.address))
      .on(RestoreMsg.cellAppDied, (_ch, _id, address) => {
        for (const p of this.proxies.values()) void p.onCellAppDied(address);
      })
      .on(BaseBackupMsg.baseApps, (_ch, list) => this.#baseAppsChanged(list))
      .on(BaseScriptMsg.baseCall, (_ch, id, method, args) => this.scripts.served(id, method, args))
      .on(BaseScriptMsg.hasBase, (_ch, id) => this.proxies.has(id) && !this.proxies.get(id)!.loggingOut)
      .on(BaseScriptMsg.createBase, (_ch, type, props) => this.createBase(type, props))
      .on(BaseScriptMsg.globalChanged, (_ch, entry) => this.globals.apply(entry))
      .on(BaseBackupMsg.baseBackup, (ch, backup) => this.backups.keep(ch.peer.address, backup))
      .on(BaseBackupMsg.dropBaseBackup, (ch, id) => this.backups.drop(ch.peer.address, id))
      .on(
        BaseBackupMsg.whereIsBase,
        (_ch, id) => this.#holdsBase(id) ? "proxy" : this.backups.holdsBackupOf(id) ? "backup" : null,
      )
      .on(BaseBackupMsg.baseAppDied, (_ch, id, address) => {
        for (const b of this.backups.takeOf(address)) {
          restoreBase(this.#restoreHost, b, id).catch((e) =>
            this.log.error(`${b.type} ${b.entityId} of dead baseapp ${id} not restored: ${(e as Error).message}`)
          );
        }
      });
  }

  /** The live baseapps changed: backups follow the new list, and clients learn where they may resume. */
  #baseAppsChanged(list: BaseAppInfo[]): void {
    this.backups.setLive(list);
    const urls = this.backups.clientUrls();
    for (const s of this.sessions) if (s.state === "online") s.sendMessage({ id: S2C.baseApps, urls });
  }

  /** Base `id` logged out: its backup baseapp drops its backup, so that it is not restored if this one dies. */
  #dropBackup(id: number): void {
    this.backups.forget(id);
    const target = backupTarget(id, this.backups.live, this.member.link.id);
    if (!target) return;
    this.member.peers.get(target.address).then(
      (ch) => ch.send(BaseBackupMsg.dropBaseBackup, id),
      (e) => this.log.warn(`could not drop the backup of entity ${id} at ${target.address}: ${(e as Error).message}`),
    );
  }

  /** A frame for the client of `id` from a cellapp generation declared dead: dropped, logged once a minute per generation. */
  #staleFrame(from: string, id: number, generation: number): void {
    const held = this.#staleLog.take(generation);
    if (held === null) return;
    this.log.warn(
      `dropped a frame for the client of entity ${id} from the cellapp at ${from}: its generation ${generation} ` +
        `was declared dead (fenced)${Throttle.note(held)}`,
    );
  }

  /** SessionHost: checks the login and attaches the session to the account's proxy. */
  async login(session: ClientSession, m: Extract<ClientMessage, { id: typeof C2S.login }>): Promise<string | null> {
    await this.authority.confirmed();
    const res = await this.accounts.login({ name: m.name, password: m.password, remote: session.remote });
    if (!res.ok) {
      this.metrics.login(loginFailure(res));
      return res.reason;
    }
    await this.#enter(session, res.entityId, res.type, m, res.created ? " (new account)" : "");
    this.metrics.login(null);
    return null;
  }

  /**
   * SessionHost: a client whose connection was lost takes its player back with a resume token (no password):
   * the proxy still here, or the entity restored from the database (its orphaned cell entity adopted).
   */
  async resume(
    session: ClientSession,
    m: Extract<ClientMessage, { id: typeof C2S.resume }>,
  ): Promise<string | ResumeElsewhere | null> {
    await this.authority.confirmed();
    let elsewhere: string | null = null;
    // A base restored here from its backup takes its last token only; one whose baseapp may be dying waits to be.
    const res = await this.tokens.redeem(m.token, async (claim, nonce) => {
      const id = claim.entityId;
      if (!this.#holdsBase(id) && !this.backups.holdsBackupOf(id)) {
        // Restored (or to be) on another baseapp: the client goes there, its token still good.
        const others = this.backups.live.filter((b) => !sameAddress(b.address, this.address));
        const holder = await findBaseHolder(
          id,
          others,
          async (address, entity) =>
            await (await this.member.peers.get(address)).request(BaseBackupMsg.whereIsBase, entity),
        );
        if (holder?.clientUrl) {
          elsewhere = holder.clientUrl;
          return `${claim.type} ${id} is held by baseapp ${holder.id}: resume at ${holder.clientUrl}`;
        }
      }
      return await this.backups.checkResume(id, nonce, 5000);
    });
    if (!res.ok && elsewhere !== null) {
      this.log.info(`resume sent on: ${res.reason}`);
      return { url: elsewhere, reason: res.reason };
    }
    if (!res.ok) return res.reason;
    const { entityId, type, account } = res.claim;
    const login = { id: C2S.login, name: account, password: "", spaceId: null, position: null } as const;
    await this.#enter(session, entityId, type, login, " (resumed)");
    return null;
  }

  /** Attaches the session to the proxy of `entityId`, loading it (and asking for its cell) when it is not here. */
  async #enter(
    session: ClientSession,
    entityId: number,
    typeName: string,
    m: Extract<ClientMessage, { id: typeof C2S.login }>,
    note: string,
  ): Promise<void> {
    const res = { entityId, type: typeName };
    let proxy = this.proxies.get(res.entityId);
    if (proxy?.loggingOut) {
      await proxy.logout().catch(() => {});
      proxy = undefined;
    }
    let placement: Placement | null = null;
    if (!proxy) {
      let loading = this.#loading.get(res.entityId);
      const fresh = !loading;
      if (!loading) {
        loading = this.#load(res.entityId, res.type, m).finally(() => this.#loading.delete(res.entityId));
        this.#loading.set(res.entityId, loading);
      }
      const loaded = await loading;
      proxy = loaded.proxy;
      if (fresh) placement = loaded.placement;
    }
    session.proxy = proxy;
    session.state = session.state === "closed" ? "closed" : "online";
    proxy.attach(session, {
      id: S2C.loginOk,
      entityId: proxy.id,
      typeId: proxy.type.id,
      ownState: encodeOwnClientState(proxy.base),
    });
    if (session.state === "closed") proxy.detach(session);
    else {
      this.#sendToken(session, proxy);
      session.sendMessage({ id: S2C.baseApps, urls: this.backups.clientUrls() });
    }
    this.log.info(`${m.name} logged in as ${proxy.type.name} ${proxy.id}${note}`, {
      entity: proxy.id,
      ...(proxy.spaceId ? { space: proxy.spaceId } : {}),
    });
    if (placement) {
      const spawn = this.#spawn();
      proxy.createCell(placement.spaceId, placement.spaceId === spawn.spaceId ? null : spawn);
    }
  }

  /** Whether the base of `id` is here: a proxy, or one loading. */
  #holdsBase(id: number): boolean {
    return this.proxies.has(id) || this.#loading.has(id);
  }

  /** Gives the client of `proxy` a new resume token. */
  #sendToken(session: ClientSession, proxy: Proxy): void {
    this.tokens.issue({ entityId: proxy.id, type: proxy.type.name, account: proxy.accountName }).then(
      (token) => {
        if (proxy.client !== session) return;
        proxy.tokenNonce = tokenNonce(token);
        session.sendMessage({ id: S2C.resumeToken, token });
      },
      (e) => this.log.error(`no resume token for ${proxy.type.name} ${proxy.id}: ${(e as Error).message}`),
    );
  }

  /** Where a new account's player appears, and a player goes whose space is gone. */
  #spawn(): Placement {
    return { spaceId: this.#opts.defaultSpaceId, position: [...this.#opts.spawnPoint] };
  }

  /** Loads (or makes) the account's entity as a proxy where the server (or the game's placement hook) puts it. */
  async #load(
    id: number,
    typeName: string,
    login: Extract<ClientMessage, { id: typeof C2S.login }>,
  ): Promise<{ proxy: Proxy; placement: Placement }> {
    const account = login.name;
    const stored = await this.store.load(id);
    const type: EntityType = this.registry.get(stored?.type ?? typeName);
    if (!type.proxy) throw new Error(`entity ${id} is a ${type.name}, which is not a proxy`);
    const placement = await placeLogin(this.#opts.placement, {
      account,
      entityId: id,
      saved: stored !== null,
      // A saved entity that never had a cell (space 0) starts where a new one does.
      server: stored?.spaceId ? { spaceId: stored.spaceId, position: stored.position } : this.#spawn(),
      asked: { spaceId: login.spaceId, position: login.position },
    });
    const cellProps = new PropertyContainer(type, "cell", { entityId: id });
    const proxy = new Proxy(
      id,
      type,
      account,
      cellProps,
      new CellRoute(this.#cellPeers, this.log),
      this.#proxyHost,
      placement.position,
      stored?.direction ?? [0, 0, 0],
    );
    // Until its cell is located, a save (autosave, an early logout) keeps it where it was placed.
    proxy.spaceId = placement.spaceId;
    if (stored) {
      const skipped = [
        ...decodePersistentState(stored.base, proxy.base),
        ...decodePersistentState(stored.cell, cellProps),
      ];
      if (skipped.length) this.log.warn(`entity ${id}: stored properties no longer persistent: ${skipped.join(", ")}`);
    } else {
      const named = type.findProperty("playerName");
      if (named && named.type.kind === "STRING") {
        (proxy.base.holds(named) ? proxy.base : cellProps).setAt(named.index, account.slice(0, 32));
      }
    }
    this.proxies.set(id, proxy);
    this.autosave.add(proxy);
    this.scripts.fire(proxy, "onCreated");
    return { proxy, placement };
  }

  /**
   * The cellappmgr says this baseapp was declared dead while it stalled: its bases were restored on other baseapps
   * from their backups. Every base is dropped without a write or a word to its cell, and every client is closed with
   * CloseCode.baseAppFenced, which makes the SDK resume where its base is now; it registers again, empty, next.
   */
  #fenced(why: string): void {
    this.authority.fenced(why);
    const bases = this.proxies.size;
    for (const p of this.proxies.values()) {
      p.fence();
      this.autosave.remove(p);
    }
    this.proxies.clear();
    this.backups.reset();
    const clients = this.sessions.size;
    for (const s of [...this.sessions]) {
      s.close("this baseapp was declared dead (fenced); resume on another", CloseCode.baseAppFenced);
    }
    this.log.error(
      `fenced: ${why}. Dropped ${bases} base(s) without writing them (other baseapps restored them) and closed ` +
        `${clients} client connection(s) to resume there; registering again as a new, empty baseapp`,
    );
  }

  /** Creates a base-only entity of `type` here (createBaseAnywhere chose this baseapp); resolves where it is. */
  async createBase(type: string, props: Record<string, unknown>): Promise<{ id: number; address: string }> {
    const route = new CellRoute(this.member.peers, this.log);
    const proxy = createBaseHere(this.registry, type, props, await this.ids.next(), (id, t, cellProps) => {
      return new Proxy(id, t, "", cellProps, route, this.#proxyHost, [0, 0, 0], [0, 0, 0]);
    });
    this.proxies.set(proxy.id, proxy);
    this.autosave.add(proxy);
    this.scripts.fire(proxy, "onCreated");
    if (proxy.type.properties.some((p) => p.persistent)) await proxy.writeToDB();
    this.log.info(`${type} ${proxy.id} created (a base-only entity)`, { entity: proxy.id });
    return { id: proxy.id, address: this.address };
  }

  /** SessionHost: a session ended. */
  closed(session: ClientSession): void {
    if (this.sessions.delete(session)) this.metrics.sessionClosed(session);
  }

  /** The state a proxy would store now (for tests and the admin view). */
  snapshot(id: number): StoredEntity | null {
    return this.proxies.get(id)?.snapshot() ?? null;
  }

  /** Logs every proxy out (persisting it), stops serving and closes the database. */
  async close(reason: string): Promise<void> {
    this.autosave.close();
    this.backups.close();
    this.authority.close();
    clearInterval(this.#tokenTimer);
    const outs = [...this.proxies.values()].map((p) =>
      p.logout(`the server is shutting down: ${reason}`).catch((e) =>
        this.log.error(`logout of ${p.id} failed: ${(e as Error).message}`)
      )
    );
    await Promise.race([Promise.all(outs), new Promise((r) => setTimeout(r, 5000))]);
    for (const s of this.sessions) s.close(reason, 1001);
    await this.#endpoint.close();
    await this.member.close(reason);
    this.metrics.close();
    this.kv.close();
  }
}
