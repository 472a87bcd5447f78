/**
 * How a client session gets its player on a baseapp: a login (checked by the accounts) or a resume token (no
 * password) attaches it to the account's proxy, still here or loaded from the database where the server (or the
 * game's placement hook) puts it; a resume whose base is held elsewhere is sent on there. Clients online are given
 * a new resume token in time.
 */
import { errorText } from "../../core/errors.ts";
import {
  decodePersistentState,
  encodeOwnClientState,
  type EntityRegistry,
  type EntityType,
  PropertyContainer,
} from "../../core/def/mod.ts";
import { C2S, type ClientMessage, S2C } from "../../core/proto/mod.ts";
import { placeLogin, type Placement, type PlacementHook } from "../../core/placement.ts";
import type { Logger } from "../../core/log.ts";
import { sameAddress } from "../../core/wire/mod.ts";
import { type Accounts, UNAVAILABLE } from "./accounts.ts";
import { isDbUnavailable } from "../../core/db/mod.ts";
import type { BaseAuthority } from "../cluster/mod.ts";
import { type LoginFailure, loginFailure } from "./login_failure.ts";
import type { BaseBackups } from "../backup/mod.ts";
import type { Checkouts, EntityStore } from "../persist/mod.ts";
import { type ResumeTokens, tokenNonce } from "./resume_token.ts";
import { type AskBaseApp, findBaseHolder } from "./resume_route.ts";
import type { ClientSession, MakeProxy, Proxy, ResumeElsewhere } from "../entity/mod.ts";
import { checkOutForLogin, type CheckoutRouteHost } from "./checkout_route.ts";

type LoginMessage = Extract<ClientMessage, { id: typeof C2S.login }>;
type ResumeMessage = Extract<ClientMessage, { id: typeof C2S.resume }>;

/** What login and resume need of their baseapp. */
export interface EntryHost {
  readonly log: Logger;
  readonly registry: EntityRegistry;
  /** This baseapp's address. */
  readonly address: string;
  readonly authority: Pick<BaseAuthority, "confirmed" | "mayAct">;
  readonly accounts: Pick<Accounts, "login">;
  /** Counts logins and failed logins. */
  readonly metrics: { login(failure: LoginFailure | null): void };
  readonly tokens: Pick<ResumeTokens, "issue" | "redeem" | "ttlMs">;
  readonly backups: Pick<BaseBackups, "live" | "holdsBackupOf" | "checkResume" | "clientUrls" | "liveChanged">;
  /** The account checkouts this baseapp holds: a base is loaded here only once its entity is checked out here. */
  readonly checkouts: Pick<Checkouts, "read" | "claim" | "isSelf" | "released" | "release" | "generation">;
  /** This baseapp's registration id (null before it has one). */
  selfId(): number | null;
  readonly store: Pick<EntityStore, "load">;
  /** The proxies held, by entity id. */
  readonly proxies: ReadonlyMap<number, Proxy>;
  readonly sessions: Iterable<ClientSession>;
  /** The game's say on where a login goes. */
  readonly placement: PlacementHook;
  /** Where a new account's player appears, and a player goes whose space is gone. */
  spawn(): Placement;
  /** Asks the baseapp at an address what it holds of an entity: its base, a backup of it, or neither. */
  readonly whereIsBase: AskBaseApp;
  /** A new proxy of this baseapp (not yet held). */
  readonly newProxy: MakeProxy;
  /** Holds `proxy` here: autosaved, its script told it was created. */
  hold(proxy: Proxy): void;
}

/** Login and resume of one baseapp. */
export class BasePlayerEntry {
  /** Proxies being loaded from the database, by entity id: a second login waits for the first one's. */
  readonly #loading = new Map<number, Promise<{ proxy: Proxy; placement: Placement }>>();
  /** Loads whose placement a login took (to ask for the cell once): the first login of a load does. */
  readonly #placed = new WeakSet<Promise<{ proxy: Proxy; placement: Placement }>>();
  readonly #tokenTimer: ReturnType<typeof setInterval>;
  /** The login or resume deciding where each entity's base is, by entity id: one at a time per entity here. */
  readonly #deciding = new Map<number, Promise<unknown>>();
  readonly #route: CheckoutRouteHost;

  constructor(private readonly host: EntryHost) {
    this.#route = {
      log: host.log,
      checkouts: host.checkouts,
      selfId: () => host.selfId(),
      live: () => host.backups.live,
      liveChanged: (ms) => host.backups.liveChanged(ms),
      holdsBase: (id) => this.holdsBase(id),
      holdsBackupOf: (id) => host.backups.holdsBackupOf(id),
      whereIsBase: host.whereIsBase,
    };
    // A client holds a token that is still good when its connection is lost: each gets a new one in time.
    this.#tokenTimer = setInterval(() => {
      // Not after a stall: if this baseapp was fenced, a base restored elsewhere accepts only the token it backed up.
      if (!host.authority.mayAct()) return;
      for (const s of host.sessions) if (s.state === "online" && s.proxy) this.#sendToken(s, s.proxy);
    }, host.tokens.ttlMs / 2);
  }

  /**
   * Checks the login and attaches the session to the account's proxy; resolves with the reason on failure, or with
   * the client URL of the baseapp holding the account's base (the client logs in there).
   */
  async login(session: ClientSession, m: LoginMessage): Promise<string | ResumeElsewhere | null> {
    const host = this.host;
    await host.authority.confirmed();
    const res = await host.accounts.login({ name: m.name, password: m.password, remote: session.remote });
    if (!res.ok) {
      host.metrics.login(loginFailure(res));
      return res.reason;
    }
    const refused = await this.#enterOrRefuse(session, res.entityId, res.type, m, res.created ? " (new account)" : "");
    if (refused === null) host.metrics.login(null);
    return refused;
  }

  /**
   * A client whose connection was lost takes its player back with a resume token (no password): the proxy still
   * here, or the entity restored from the database (its orphaned cell entity adopted).
   */
  async resume(session: ClientSession, m: ResumeMessage): Promise<string | ResumeElsewhere | null> {
    const host = this.host;
    await host.authority.confirmed();
    let elsewhere: string | null = null;
    // A base restored here from its backup takes its last token only; one whose baseapp may be dying waits to be.
    const res = await host.tokens.redeem(m.token, async (claim, nonce) => {
      const id = claim.entityId;
      if (!this.holdsBase(id) && !host.backups.holdsBackupOf(id)) {
        // Restored (or to be) on another baseapp: the client goes there, its token still good.
        const others = host.backups.live.filter((b) => !sameAddress(b.address, host.address));
        const holder = await findBaseHolder(id, others, host.whereIsBase);
        if (holder?.clientUrl) {
          elsewhere = holder.clientUrl;
          return `${claim.type} ${id} is held by baseapp ${holder.id}: resume at ${holder.clientUrl}`;
        }
      }
      return await host.backups.checkResume(id, nonce, 5000);
    });
    if (!res.ok && elsewhere !== null) {
      host.log.info(`resume sent on: ${res.reason}`);
      return { url: elsewhere, reason: res.reason };
    }
    if (!res.ok) return res.reason;
    const { entityId, type, account } = res.claim;
    const login = { id: C2S.login, name: account, password: "", spaceId: null, position: null } as const;
    return await this.#enterOrRefuse(session, entityId, type, login, " (resumed)");
  }

  /**
   * #enter once the entity is checked out here, or where its base is (another baseapp holds it), or the reason it
   * was refused: the entity could not be checked out or loaded while the database is unreachable.
   */
  async #enterOrRefuse(
    session: ClientSession,
    entityId: number,
    typeName: string,
    m: LoginMessage,
    note: string,
  ): Promise<string | ResumeElsewhere | null> {
    try {
      const got = await this.#decide(entityId, typeName, m);
      if (typeof got === "string") {
        this.host.log.info(`login of "${m.name}" refused: ${got}`, { entity: entityId });
        return got;
      }
      if ("url" in got) {
        this.host.log.info(`login of "${m.name}" sent on: ${got.reason}`, { entity: entityId });
        return got;
      }
      await this.#enter(session, got.proxy, m, note);
      return null;
    } catch (e) {
      if (!isDbUnavailable(e)) throw e;
      this.host.log.warn(`login of "${m.name}" refused: ${e.message}`);
      return UNAVAILABLE;
    }
  }

  /** Whether the base of `id` is here: a proxy, or one loading. */
  holdsBase(id: number): boolean {
    return this.host.proxies.has(id) || this.#loading.has(id);
  }

  /** Stops giving clients new tokens. */
  close(): void {
    clearInterval(this.#tokenTimer);
  }

  /**
   * Where the base of `entityId` is, one login of it at a time here: its proxy (held, or loading once it is checked
   * out here), the baseapp holding it, or why neither.
   */
  #decide(
    entityId: number,
    typeName: string,
    m: LoginMessage,
  ): Promise<string | ResumeElsewhere | { proxy: Proxy | Promise<{ proxy: Proxy; placement: Placement }> }> {
    const before = this.#deciding.get(entityId) ?? Promise.resolve();
    const turn = before.catch(() => {}).then(async () => {
      for (let round = 0; round < 3; round++) {
        const leaving = this.host.proxies.get(entityId);
        if (leaving?.loggingOut) await leaving.logout().catch(() => {});
        // A logout here gives the checkout back: read after it.
        await this.host.checkouts.released(entityId);
        const decided = await checkOutForLogin(this.#route, entityId);
        if (decided.kind === "refused") return decided.reason;
        if (decided.kind === "elsewhere") return { url: decided.url, reason: decided.reason };
        const proxy = this.host.proxies.get(entityId);
        if (proxy?.loggingOut) continue;
        if (proxy) return { proxy };
        let loading = this.#loading.get(entityId);
        if (!loading) {
          // Loaded only under a checkout of its own (a proxy that was here may have logged out since the decision).
          if (this.host.checkouts.generation(entityId) === undefined) continue;
          loading = this.#load(entityId, typeName, m).catch((e) => {
            // Not loaded: the checkout goes back, for a later login here or elsewhere.
            void this.host.checkouts.release(entityId).catch(() => false);
            throw e;
          }).finally(() => this.#loading.delete(entityId));
          this.#loading.set(entityId, loading);
        }
        return { proxy: loading };
      }
      return `${typeName} ${entityId} is logging out and in here at the same time; try again`;
    });
    const settled = turn.finally(() => {
      if (this.#deciding.get(entityId) === settled) this.#deciding.delete(entityId);
    });
    this.#deciding.set(entityId, settled);
    return turn;
  }

  /** Attaches the session to `got`: a proxy held, or one loading (asking for its cell when this login loaded it). */
  async #enter(
    session: ClientSession,
    got: Proxy | Promise<{ proxy: Proxy; placement: Placement }>,
    m: LoginMessage,
    note: string,
  ): Promise<void> {
    const host = this.host;
    let proxy: Proxy;
    let placement: Placement | null = null;
    if (got instanceof Promise) {
      const fresh = !this.#placed.has(got);
      this.#placed.add(got);
      const loaded = await got;
      proxy = loaded.proxy;
      if (fresh) placement = loaded.placement;
    } else proxy = got;
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
      session.sendMessage({ id: S2C.baseApps, urls: host.backups.clientUrls() });
    }
    host.log.info(`${m.name} logged in as ${proxy.type.name} ${proxy.id}${note}`, {
      entity: proxy.id,
      ...(proxy.spaceId ? { space: proxy.spaceId } : {}),
    });
    if (placement) {
      const spawn = host.spawn();
      proxy.createCell(placement.spaceId, placement.spaceId === spawn.spaceId ? null : spawn);
    }
  }

  /** Gives the client of `proxy` a new resume token. */
  #sendToken(session: ClientSession, proxy: Proxy): void {
    this.host.tokens.issue({ entityId: proxy.id, type: proxy.type.name, account: proxy.accountName }).then(
      (token) => {
        if (proxy.client !== session) return;
        proxy.tokenNonce = tokenNonce(token);
        session.sendMessage({ id: S2C.resumeToken, token });
      },
      (e) => this.host.log.error(`no resume token for ${proxy.type.name} ${proxy.id}: ${errorText(e)}`),
    );
  }

  /** Loads (or makes) the account's entity as a proxy where the server (or the game's placement hook) puts it. */
  async #load(id: number, typeName: string, login: LoginMessage): Promise<{ proxy: Proxy; placement: Placement }> {
    const host = this.host;
    const account = login.name;
    const stored = await host.store.load(id);
    const type: EntityType = host.registry.get(stored?.type ?? typeName);
    if (!type.proxy) throw new Error(`entity ${id} is a ${type.name}, which is not a proxy`);
    const placement = await placeLogin(host.placement, {
      account,
      entityId: id,
      saved: stored !== null,
      // A saved entity that never had a cell (space 0) starts where a new one does.
      server: stored?.spaceId ? { spaceId: stored.spaceId, position: stored.position } : host.spawn(),
      asked: { spaceId: login.spaceId, position: login.position },
    });
    const cellProps = new PropertyContainer(type, "cell", { entityId: id });
    const proxy = host.newProxy(id, type, account, cellProps, placement.position, stored?.direction ?? [0, 0, 0]);
    // Until its cell is located, a save (autosave, an early logout) keeps it where it was placed.
    proxy.spaceId = placement.spaceId;
    if (stored) {
      const skipped = [
        ...decodePersistentState(stored.base, proxy.base),
        ...decodePersistentState(stored.cell, cellProps),
      ];
      if (skipped.length) host.log.warn(`entity ${id}: stored properties no longer persistent: ${skipped.join(", ")}`);
    } else {
      const named = type.findProperty("playerName");
      if (named && named.type.kind === "STRING") {
        (proxy.base.holds(named) ? proxy.base : cellProps).setAt(named.index, account.slice(0, 32));
      }
    }
    host.hold(proxy);
    return { proxy, placement };
  }
}
