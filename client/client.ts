/**
 * The client SDK's connection: a logged-in player over a WebSocket (browsers and Deno), with the entities of its
 * AOI, the events it raises and what it sends. It puts together the login (login.ts), the socket (transport.ts),
 * reading the server's messages (dispatch.ts), the player (player.ts), the calls it makes (calls.ts) and resuming
 * after a lost connection (resume.ts).
 */
import { decodeClientState, type PropertyContainer } from "../core/def/mod.ts";
import { C2S, type ClientMessage } from "../core/proto/mod.ts";
import { type ClientEvents, Emitter, type EntityView, type Vec3 } from "./events.ts";
import type { ClientWorld } from "./world.ts";
import {
  awaitLogin,
  type ConnectOptions,
  type Credentials,
  LoginError,
  loginMessage,
  type PendingLogin,
} from "./login.ts";
import { type PlayerEntity, startPlayer } from "./player.ts";
import { type ClientStats, newClientStats, Transport } from "./transport.ts";
import { type LoginOk, readFrame, type Receiver } from "./dispatch.ts";
import { type ResumeOptions, Resumer } from "./resume.ts";
import { adoptDefinitions } from "./definitions.ts";
import { baseCall, cellCall, positionMessage } from "./calls.ts";

/** Most times a login is sent on to the baseapp holding the player, so that two pointing at each other end. */
const MAX_LOGIN_REDIRECTS = 4;

/** A logged-in client. */
export class Client extends Emitter<ClientEvents> {
  /** The player's own entity, set once the login succeeded (connect resolves with it set). */
  player!: PlayerEntity;
  /** Counters of the frames, messages and bytes this client received and sent. */
  readonly stats: ClientStats = newClientStats();
  /** The AOI model (client/world.ts); null before login or with `decodeAoi: false`. */
  world: ClientWorld | null = null;
  /** The game version the server last announced with new definitions (a reload); null until one. */
  gameVersion: string | null = null;
  #opts: ConnectOptions;
  #transport: Transport;
  #resumer: Resumer;
  #receiver: Receiver;
  #loggedIn: PendingLogin | null = null;
  /** The login under way: what it sends, where the server said the player is, and how many times it was sent on. */
  #login: { creds: Credentials; next: string | null; redirects: number } | null = null;
  #closed = false;
  #closedWith: { code: number; reason: string } | null = null;

  private constructor(url: string, opts: ConnectOptions) {
    super();
    this.#opts = opts;
    this.#transport = new Transport(this.stats, {
      frame: (bytes) => readFrame(bytes, this.#receiver),
      close: (code, reason) => this.#onClose(code, reason),
    });
    this.#resumer = new Resumer(url, this.#transport);
    this.#receiver = {
      client: this,
      resume: this.#resumer,
      loginOk: (m) => this.#onLoginOk(m),
      loginFailed: (reason) => this.#onLoginFailed(reason),
      definitions: (version, json) => {
        // Every container this client holds: the player's, and those of the entities in its AOI and its cache.
        const w = this.world;
        const held = new Set<PropertyContainer>();
        for (const c of [this.player?.container, w?.player?.container]) if (c) held.add(c);
        for (const e of [...w?.entities.values() ?? [], ...w?.cache.values() ?? []]) held.add(e.container);
        adoptDefinitions(opts.registry, JSON.parse(json), held);
        this.gameVersion = version;
        this.emit("definitions", version);
      },
      elsewhere: (url, reason) => {
        if (this.#loggedIn && this.#login) this.#login.next = url;
        else this.#resumer.noteElsewhere(url, reason);
      },
    };
  }

  /** Connects to a baseapp's client URL and logs in; rejects with LoginError when refused. */
  static connect(url: string, creds: Credentials, opts: ConnectOptions): Promise<Client> {
    const c = new Client(url, opts);
    return awaitLogin(url, opts.timeoutMs ?? 15_000, c, () => c.close(), (pending) => {
      c.#loggedIn = pending;
      c.#login = { creds, next: null, redirects: 0 };
      c.#transport.use(new WebSocket(url), () => loginMessage(creds));
    });
  }

  /**
   * Connects to a baseapp's client URL and takes a player back with a resume token (one `resumeToken` gave, kept
   * e.g. over a page reload), no password; rejects with LoginError when the token is refused.
   */
  static async resume(url: string, token: string, opts: ConnectOptions): Promise<Client> {
    const c = new Client(url, opts);
    c.#resumer.noteToken(token);
    const r = await c.#resumer.start(opts.timeoutMs ?? 15_000);
    if (r.ok) return c;
    c.close();
    throw new LoginError(`resume refused: ${r.reason}`);
  }

  /** The resume token the server gave last (single-use, short-lived), or null before it came. */
  get resumeToken(): string | null {
    return this.#resumer.token;
  }

  /** The entities in the AOI (empty without a world model). */
  get entities(): ReadonlyMap<number, EntityView> {
    return this.world?.entities ?? new Map();
  }

  /**
   * Whether property `name` of entity `id` holds what the server has at the detail level the entity is seen at;
   * false for one of a nearer level (it reads as its default, or as last seen) and for an entity not in the AOI.
   */
  hasReceived(id: number, name: string): boolean {
    return this.world?.hasReceived(id, name) ?? false;
  }

  /** The reference position packed positions are relative to (docs/protocol.md), as the server last set it. */
  get reference(): Readonly<Vec3> {
    return this.world?.reference ?? { x: 0, y: 0, z: 0 };
  }

  /**
   * How far an entity's position may be off the server's, per axis (metres): at `at` (an entity's position), or
   * the worst case within the AoI. Packed positions are finest near the reference position.
   */
  positionErrorBound(at?: Vec3): Vec3 {
    return this.world?.positionErrorBound(at) ?? { x: 0, y: 0, z: 0 };
  }

  /** True while the client is taking its player back after a lost connection (what it sends then is refused). */
  get resuming(): boolean {
    return this.#resumer.resuming;
  }

  /** True once the connection closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The code and reason the client closed with (as its "close" event gave them), or null while it is open. */
  get closedWith(): { code: number; reason: string } | null {
    return this.#closedWith;
  }

  /**
   * Sends one session message (batched with others of this turn); the methods above make the ones a game needs.
   *
   * @internal The message form is the wire protocol's (core/proto), not part of the SDK's API: for tools and tests.
   */
  sendMessage(m: ClientMessage): void {
    this.#transport.message(m);
  }

  /** Sends raw client-protocol bytes (AOI replies, or tests of bad input). */
  send(bytes: Uint8Array): void {
    this.#transport.raw(bytes);
  }

  /** Sends raw bytes as a frame of their own right away. */
  sendFrame(bytes: Uint8Array | string): void {
    this.#transport.frame(bytes);
  }

  /** Asks for AOI traffic (done after login unless `enableEntities: false`). */
  enableEntities(): void {
    this.sendMessage({ id: C2S.enableEntities });
  }

  /** Calls an exposed base method of the player. */
  callBase(name: string, ...args: unknown[]): void {
    this.sendMessage(baseCall(this.player, name, args));
  }

  /** Calls an exposed cell method of the player (target null) or of an entity in the AOI. */
  callCell(target: number | null, name: string, ...args: unknown[]): void {
    this.sendMessage(cellCall(this.player, this.entities, target, name, args));
  }

  /** Reports the player's position and direction (yaw, pitch, roll in radians). */
  move(pos: Vec3, dir: [number, number, number] = [this.player.yaw, this.player.pitch, this.player.roll]): void {
    this.player.position = { ...pos };
    [this.player.yaw, this.player.pitch, this.player.roll] = dir;
    this.sendMessage(positionMessage(pos, dir));
  }

  /** Logs out: the server saves the player and closes the connection; resolves when closed. */
  logout(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const done = new Promise<void>((r) => this.on("close", () => r()));
    this.sendMessage({ id: C2S.logout });
    return done;
  }

  /** Writes what is queued as one frame now. */
  flush(): void {
    this.#transport.flush();
  }

  /** Closes the connection (the server keeps the player for a grace period). */
  close(): void {
    this.#resumer.stop();
    this.flush();
    this.#transport.close(1000, "client closed");
  }

  #onClose(code: number, reason: string): void {
    if (this.#closed) return;
    if (this.#resumer.closed(code, reason)) return;
    const login = this.#login;
    if (this.#loggedIn && login?.next && login.redirects < MAX_LOGIN_REDIRECTS) {
      // The account's player is held by another baseapp: the login goes there (BigWorld's onLogOnAttempt there).
      const url = login.next;
      login.next = null;
      login.redirects++;
      this.#resumer.url = url;
      this.#transport.discard();
      this.#transport.use(new WebSocket(url), () => loginMessage(login.creds));
      return;
    }
    const resume = this.#opts.resume ?? {};
    if (resume !== false && !this.#loggedIn && this.#resumer.mayResume(code)) {
      this.#resume(resume, code, reason);
      return;
    }
    this.#closed = true;
    this.#closedWith = { code, reason };
    this.#loggedIn?.reject(new LoginError(`connection closed before login: ${code} ${reason}`));
    this.#loggedIn = null;
    this.emit("close", code, reason);
  }

  /** Takes the player back after a lost connection; closes for good when that fails. */
  async #resume(opts: ResumeOptions, code: number, reason: string): Promise<void> {
    const r = await this.#resumer.afterLoss(opts, code);
    if (r.ok) {
      this.emit("resumed", r.url);
      return;
    }
    this.#closed = true;
    this.#closedWith = { code, reason: `${reason || "connection lost"}; not resumed: ${r.reason}` };
    this.emit("close", code, this.#closedWith.reason);
  }

  #onLoginOk(m: LoginOk): void {
    this.#login = null;
    this.player = startPlayer(m.entityId, m.typeId, this.#opts, {
      send: (b) => this.send(b),
      events: this,
      useWorld: (w) => {
        this.world = w;
      },
    });
    decodeClientState(m.ownState, this.player.container);
    if (this.#opts.enableEntities !== false) this.enableEntities();
    this.#loggedIn?.resolve();
    this.#loggedIn = null;
    this.#resumer.settle({ ok: true });
  }

  #onLoginFailed(reason: string): void {
    this.#loggedIn?.reject(new LoginError(`login refused: ${reason}`));
    this.#loggedIn = null;
    this.#resumer.settle({ ok: false, final: true, reason });
  }
}

/** Connects to a baseapp's client URL (`clientUrl` in /api/cluster) and logs in. */
export function connect(url: string, creds: Credentials, opts: ConnectOptions): Promise<Client> {
  return Client.connect(url, creds, opts);
}
