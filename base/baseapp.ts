import { errorText } from "../core/errors.ts";
import type { Config } from "../core/config/mod.ts";
import type { Logger } from "../core/log.ts";
import { type MemberProcess, startMember } from "../core/member_process.ts";
import { type Db, openDb } from "../core/db/mod.ts";
import { EntityIdPool } from "../core/id_pool.ts";
import { BusyMeter } from "../core/busy.ts";
import { BaseBackupMsg, MgrLease } from "../core/wire/mod.ts";
import type { EntityRegistry } from "../core/def/mod.ts";
import type { BaseScripts } from "../core/base_script.ts";
import { type BaseGameHooks, swapBaseGame } from "./game_swap.ts";
import { type C2S, type ClientMessage, ErrorCode } from "../core/proto/mod.ts";
import type { Placement } from "../core/placement.ts";
import {
  Autosave,
  Checkouts,
  DEFAULT_AUTOSAVE_SEC,
  EntityStore,
  heldIdHighWater,
  type StoredEntity,
} from "./persist/mod.ts";
import { Accounts, BasePlayerEntry, checkOutRestored, releaseStale, ResumeTokens } from "./login/mod.ts";
import type { PeerSource } from "./cell_link/mod.ts";
import { type ClientEndpoint, serveClients } from "./client/mod.ts";
import {
  BaseGlobals,
  BaseScriptRuntime,
  ClientSession,
  createBaseHere,
  type MakeProxy,
  Proxy,
  type ProxyHost,
  type ResumeElsewhere,
  type SessionHost,
  type SessionLimits,
} from "./entity/mod.ts";
import { type BaseAppOptions, DEFAULT_LIMITS, type ResolvedOptions, resolveOptions } from "./baseapp_options.ts";
import { BaseBackups, type BaseRestoreHost, restoreBase } from "./backup/mod.ts";
import { BaseAppMetrics } from "./baseapp_metrics.ts";
import {
  BaseAuthority,
  confirmedRequests,
  followMgr,
  heldBackPeers,
  HeldBackRoute,
  LiveBaseApps,
} from "./cluster/mod.ts";
import { serveBaseApp } from "./baseapp_handlers.ts";
import { history } from "../core/history.ts";

/**
 * A baseapp process: joins the cluster, serves game clients over WebSocket,
 * holds their proxies, routes between client, base and cell, and persists
 * entities in its database (Deno KV or PostgreSQL). This puts its parts together: login and resume
 * (player_entry.ts), its wire handlers (baseapp_handlers.ts), its membership
 * of the cluster (cluster/base_membership.ts).
 */
export class BaseApp implements SessionHost {
  readonly member: MemberProcess;
  readonly kv: Db;
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
  /** The accounts' entities checked out to this baseapp in the database: each logged-in account's base is in one place. */
  readonly checkouts: Checkouts;
  /** Its lease on its bases, renewed by the cellappmgr's answers (core/wire/lease.ts). */
  readonly lease: MgrLease;
  /**
   * Whether this baseapp may act for its bases: held back after a stall, or while its lease is lapsed, until the
   * cellappmgr confirms it.
   */
  readonly authority: BaseAuthority;
  /** The peers as the routes to cell entities see them: held back while `authority` doubts. */
  readonly #cellPeers: PeerSource;
  /** Proxies by entity id. */
  readonly proxies: Map<number, Proxy> = new Map();
  readonly sessions: Set<ClientSession> = new Set();
  /** Its figures for GET /metrics. */
  readonly metrics: BaseAppMetrics = new BaseAppMetrics(this.sessions);
  readonly #endpoint: ClientEndpoint;
  /** Busy share of wall time: client traffic, relaying, storage. */
  readonly #busy = new BusyMeter();
  readonly #opts: ResolvedOptions;
  /** The game's login check and placement hook in force: a game reload replaces them (swapGame). */
  #hooks: BaseGameHooks;
  readonly #proxyHost: ProxyHost;
  /** A new proxy of this baseapp (not yet held), its way to its cell entity held back while `authority` doubts. */
  readonly #newProxy: MakeProxy = (id, type, account, cellProps, position, direction) => {
    const route = new HeldBackRoute(this.authority, this.#cellPeers, this.log);
    const proxy = new Proxy(id, type, account, cellProps, route, this.#proxyHost, position, direction);
    route.refuse = (message) => proxy.client?.error(ErrorCode.serverError, 0, message);
    return proxy;
  };
  /** Login and resume: sessions get their players. */
  readonly #entry: BasePlayerEntry;
  /** The live baseapps: whom bases are backed up to, where clients may resume. */
  readonly #liveBaseApps: LiveBaseApps;

  /** The base scripts: script objects, base method calls, calls between bases and to cells. */
  readonly scripts: BaseScriptRuntime;
  /** This baseapp's copy of the global store. */
  readonly globals: BaseGlobals;

  /** Signs and checks the resume tokens clients reconnect with. */
  readonly tokens: ResumeTokens;

  private constructor(
    cfg: Config,
    log: Logger,
    kv: Db,
    opts: BaseAppOptions,
    heldIds: number,
    tokens: ResumeTokens,
    globals: BaseGlobals,
  ) {
    this.kv = kv;
    this.globals = globals;
    this.tokens = tokens;
    this.log = log;
    this.registry = opts.registry;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    this.#opts = resolveOptions(opts);
    this.#hooks = { checkLogin: opts.checkLogin ?? null, placement: this.#opts.placement };
    const player = this.registry.get(this.#opts.playerType);
    if (!player.proxy) throw new Error(`playerType: ${player.name} is not a proxy (proxy: true in its definition)`);
    this.#endpoint = serveClients(cfg.host, opts.clientPort ?? 0, (ws, remote) => {
      this.sessions.add(new ClientSession(ws, remote, this));
    }, {
      headerTimeoutMs: cfg.headerTimeoutMs,
      sockets: cfg.clientSockets,
      publicHost: cfg.publicHost,
      tls: cfg.tls,
      url: cfg.clientUrl ?? null,
      log,
    });
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
    const { link, peers } = this.member;
    this.lease = new MgrLease(link, cfg.mgrLeaseMs, log, "baseapp");
    this.authority = new BaseAuthority(link, this.lease, log, () => this.proxies.size);
    this.checkouts = new Checkouts(kv, () => link.id === null ? null : { baseapp: link.id, address: link.address });
    this.#cellPeers = heldBackPeers(this.authority, peers);
    this.store = new EntityStore(kv);
    this.store.holderCheck = (id) => this.checkouts.heldCheck(id);
    this.store.onCommit = (seconds) => this.metrics.commit(seconds);
    // Nothing is written after a stall until the cellappmgr confirms this baseapp (base/cluster/base_fence.ts): every commit waits.
    this.store.gate = () => this.authority.confirmed();
    this.store.onGroupFailed = (why) => log.warn(`${why}; its saves were retried one by one`);
    let toldAt = -Infinity;
    this.store.onUnavailable = (e) => {
      // One line per 5 s of an outage, not one per waiting save.
      if (performance.now() - toldAt < 5000) return;
      toldAt = performance.now();
      log.warn(`saves wait for the database: ${e.message}`);
    };
    this.autosave = new Autosave((opts.autosaveSec ?? DEFAULT_AUTOSAVE_SEC) * 1000, log);
    this.accounts = new Accounts(kv, {
      autoCreate: this.#opts.autoCreateAccounts,
      check: (attempt) => this.#hooks.checkLogin?.(attempt) ?? null,
      iterations: this.#opts.passwordIterations,
      limits: opts.loginLimits,
      entityType: this.#opts.playerType,
      // Concurrent first logins each wait for an id of their own.
      newEntityId: () => this.ids.next(),
    });
    this.scripts = new BaseScriptRuntime(this.#opts.baseScripts, {
      log,
      get address() {
        return link.address;
      },
      globals,
      callTimeoutMs: opts.callTimeoutMs ?? 5000,
      local: (id) => this.proxies.get(id),
      others: () => this.backups.live.filter((b) => b.id !== link.id).map((b) => b.address),
      // Calls to other bases wait, like everything its bases do, while the cellappmgr may have declared it dead.
      peer: async (address) => {
        await this.authority.confirmed();
        return await peers.get(address);
      },
      mgr: () => link.channel,
    });
    this.#proxyHost = {
      get address() {
        return link.address;
      },
      log,
      maxSpeed: this.#opts.maxSpeed,
      moveRate: this.#opts.moveRate,
      disconnectGraceMs: this.#opts.disconnectGraceMs,
      scripts: this.scripts,
      ...confirmedRequests(link, this.authority, this.store, log),
      removed: (p) => {
        this.autosave.remove(p);
        this.#liveBaseApps.dropBackup(p.id);
        if (this.proxies.get(p.id) === p) {
          this.proxies.delete(p.id);
          history.unbase(p.id, "removed");
        }
        this.checkouts.release(p.id).catch((e) =>
          log.warn(`the checkout of entity ${p.id} was not given back: ${errorText(e)}`, { entity: p.id })
        );
      },
    };
    this.backups = new BaseBackups({
      log,
      selfId: () => link.id,
      bases: () => this.proxies.values(),
      send: async (address, backup) => {
        if (!this.authority.mayAct()) throw new Error("this baseapp awaits the cellappmgr's word");
        (await peers.get(address)).send(BaseBackupMsg.baseBackup, backup);
      },
    });
    this.#liveBaseApps = new LiveBaseApps(this.backups, this.sessions, link, peers, log);
    const whereIsBase = async (address: string, entity: number) =>
      await (await peers.get(address)).request(BaseBackupMsg.whereIsBase, entity);
    // Once the cellappmgr's list names this registration, it says whose checkouts are stale (checkout_route.ts).
    let swept: number | null = null;
    this.#liveBaseApps.onChanged = (list) => {
      const self = link.id;
      if (self === null || swept === self || !list.some((b) => b.id === self)) return;
      swept = self;
      releaseStale({
        log,
        checkouts: this.checkouts,
        live: () => this.backups.live,
        selfId: () => link.id,
        holdsBase: (id) => this.#entry.holdsBase(id),
        holdsBackupOf: (id) => this.backups.holdsBackupOf(id),
        whereIsBase,
      }).catch((e) => log.warn(`stale checkouts were not given back: ${errorText(e)}`));
    };
    this.#entry = new BasePlayerEntry({
      log,
      registry: this.registry,
      get address() {
        return link.address;
      },
      authority: this.authority,
      accounts: this.accounts,
      metrics: this.metrics,
      tokens,
      backups: this.backups,
      checkouts: this.checkouts,
      selfId: () => link.id,
      store: this.store,
      proxies: this.proxies,
      sessions: this.sessions,
      placement: (req) => this.#hooks.placement(req),
      spawn: () => this.#spawn(),
      whereIsBase,
      newProxy: this.#newProxy,
      hold: (proxy) => this.#hold(proxy),
    });
    followMgr({
      log,
      link,
      authority: this.authority,
      ids: this.ids,
      globals,
      proxies: this.proxies,
      autosave: this.autosave,
      backups: this.backups,
      checkouts: this.checkouts,
      sessions: this.sessions,
    });
    const restoreHost: BaseRestoreHost = {
      log,
      registry: this.registry,
      has: (id) => this.#entry.holdsBase(id),
      newProxy: this.#newProxy,
      hold: (proxy, nonce) => {
        this.proxies.set(proxy.id, proxy);
        history.base(proxy.id, proxy.accountName);
        if (proxy.persisted) this.autosave.add(proxy);
        if (proxy.type.proxy) this.backups.awaitResume(proxy.id, nonce);
        this.scripts.fire(proxy, "onCreated");
      },
      holds: (proxy) => this.proxies.get(proxy.id) === proxy,
      checkOut: (id, deadId) =>
        checkOutRestored({ checkouts: this.checkouts, live: () => this.backups.live }, id, deadId),
      drop: (proxy, why) => {
        proxy.client?.close(`this account's base is elsewhere: ${why}`, 4002);
        proxy.fence();
        this.autosave.remove(proxy);
        this.backups.forget(proxy.id);
        if (this.proxies.get(proxy.id) === proxy) this.proxies.delete(proxy.id);
      },
      rebase: async (cellapp, id) => {
        await this.authority.confirmed();
        return await (await peers.get(cellapp)).request(BaseBackupMsg.rebase, id, this.address);
      },
      spawn: () => this.#spawn(),
    };
    serveBaseApp(this.member.handlers, {
      log,
      proxies: this.proxies,
      link,
      metrics: this.metrics,
      scripts: this.scripts,
      globals,
      backups: this.backups,
      liveBaseApps: this.#liveBaseApps,
      holdsBase: (id) => this.#entry.holdsBase(id),
      createBase: (type, props) => this.createBase(type, props),
      restore: (b, deadId) => restoreBase(restoreHost, b, deadId),
    });
  }

  /** Opens the database, starts the client endpoint, then joins the cluster. */
  static async start(cfg: Config, log: Logger, opts: BaseAppOptions): Promise<BaseApp> {
    // A PostgreSQL server that is not up yet is waited for, one line per attempt.
    const kv = await openDb(cfg, { log });
    log.info(`${kv.description} open`);
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
    log.info(`serving clients at ${app.clientUrl} (${app.#endpoint.sockets} sockets)`);
    return app;
  }

  /** The address other processes reach this baseapp on (as the cellappmgr lists it, once registered). */
  get address(): string {
    return this.member.link.address;
  }

  /** The WebSocket URL clients connect to. */
  get clientUrl(): string {
    return this.#endpoint.url;
  }

  /** SessionHost: checks the login and attaches the session to the account's proxy (or says where it is). */
  login(
    session: ClientSession,
    m: Extract<ClientMessage, { id: typeof C2S.login }>,
  ): Promise<string | ResumeElsewhere | null> {
    return this.#entry.login(session, m);
  }

  /** SessionHost: a client whose connection was lost takes its player back with a resume token (no password). */
  resume(
    session: ClientSession,
    m: Extract<ClientMessage, { id: typeof C2S.resume }>,
  ): Promise<string | ResumeElsewhere | null> {
    return this.#entry.resume(session, m);
  }

  /** Where a new account's player appears, and a player goes whose space is gone. */
  #spawn(): Placement {
    return { spaceId: this.#opts.defaultSpaceId, position: [...this.#opts.spawnPoint] };
  }

  /** Holds `proxy` here: autosaved, its script told it was created. */
  #hold(proxy: Proxy): void {
    this.proxies.set(proxy.id, proxy);
    history.base(proxy.id, proxy.accountName);
    if (proxy.persisted) this.autosave.add(proxy);
    this.scripts.fire(proxy, "onCreated");
  }

  /** Creates a base-only entity of `type` here (createBaseAnywhere chose this baseapp); resolves where it is. */
  async createBase(type: string, props: Record<string, unknown>): Promise<{ id: number; address: string }> {
    const route = new HeldBackRoute(this.authority, this.#cellPeers, this.log);
    const proxy = createBaseHere(this.registry, type, props, await this.ids.next(), (id, t, cellProps) => {
      return new Proxy(id, t, "", cellProps, route, this.#proxyHost, [0, 0, 0], [0, 0, 0]);
    });
    this.#hold(proxy);
    if (proxy.persisted) await proxy.writeToDB();
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

  /**
   * A game reload: `registry`'s definitions and `scripts` for every base here, in place, and the new definitions to
   * every client online (game_swap.ts); the new login check and placement hook from the next login on.
   */
  swapGame(registry: EntityRegistry, scripts: BaseScripts, version: string, hooks: BaseGameHooks): void {
    swapBaseGame(this, registry, scripts, version);
    this.#hooks = hooks;
  }

  /** Logs every proxy out (persisting it), stops serving and closes the database. */
  async close(reason: string): Promise<void> {
    this.autosave.close();
    this.backups.close();
    this.authority.close();
    this.lease.stop();
    this.#entry.close();
    const outs = [...this.proxies.values()].map((p) =>
      p.logout(`the server is shutting down: ${reason}`).catch((e) =>
        this.log.error(`logout of ${p.id} failed: ${errorText(e)}`)
      )
    );
    await Promise.race([
      Promise.all(outs).then(() => this.checkouts.allReleased()),
      new Promise((r) => setTimeout(r, 5000)),
    ]);
    for (const s of this.sessions) s.close(reason, 1001);
    await this.#endpoint.close();
    await this.member.close(reason);
    this.metrics.close();
    await this.kv.close();
  }
}
