/**
 * The client SDK's connection: logs in over a WebSocket (browsers and Deno),
 * keeps the player entity, hands AOI messages to a pluggable world model,
 * raises events and sends calls and movement.
 */
import { ByteReader, ByteWriter } from "../core/def/bytes.ts";
import {
  decodeClientState,
  type EntityRegistry,
  type EntityType,
  PropertyContainer,
  readChange,
} from "../core/def/mod.ts";
import {
  C2S,
  type ClientMessage,
  CloseCode,
  decodeArgs,
  encodeArgs,
  MAX_SESSION_ID,
  readServerMessage,
  S2C,
  type ServerMessage,
  type Vec3Tuple,
  writeClientMessage,
} from "../core/def/client_protocol.ts";
import { type ClientEvents, Emitter, type EntityView, type Vec3 } from "./events.ts";
import { ClientWorld } from "./world.ts";
import { isLostConnection, type ResumeOptions, type ResumeResult, retryResume } from "./resume.ts";

/** Account name, password, and where the player would like to appear. */
export interface Credentials {
  name: string;
  password: string;
  /**
   * A space to enter and a position in it: a request the server grants only
   * when the game lets clients choose (or with a baseapp's
   * `--client-spawn`); otherwise the server decides (the saved place,
   * else the default space's spawn point). `cellReady` says where it was.
   */
  spaceId?: number;
  position?: Vec3;
}

/** How to connect. */
export interface ConnectOptions {
  /** The game's entity definitions (the same the server runs). */
  registry: EntityRegistry;
  /**
   * Decode AOI traffic into `entities` (default true); false only counts it. Such a client answers no enter (with
   * the request for the entity's state): the server sends it nothing of an entering entity until its request
   * timeout (5 s) passes, then the whole entity: less, and other, traffic than a player's client gets.
   */
  decodeAoi?: boolean;
  /**
   * Raise enter, leave, move, property, detailLevel and clientMethod events for the entities in the AoI (default
   * true). false keeps the world model (it answers enters, so the server sends what a real client gets) without
   * events: the cheapest client that still loads the server as a player does, for load generators.
   */
  aoiEvents?: boolean;
  /** Send enableEntities right after login (default true). */
  enableEntities?: boolean;
  /** Give up on the login after this long (default 15,000 ms). */
  timeoutMs?: number;
  /**
   * After a lost connection (closed without a close frame: the baseapp died, the network dropped), take the
   * player back with the resume token of the last login, no password: `urls` are the baseapps' client URLs to try
   * in turn (default: the one connected to, then the live baseapps the server listed), for at most `withinMs`
   * (default 30,000). false: a lost connection is
   * the end.
   */
  resume?: ResumeOptions | false;
}

/** The login was refused; `reason` is the server's. */
export class LoginError extends Error {
  override name = "LoginError";
}

/** The player's own entity. */
export class PlayerEntity implements EntityView {
  position: Vec3 = { x: 0, y: 0, z: 0 };
  yaw = 0;
  pitch = 0;
  roll = 0;
  detailLevel = 0;
  spaceId = 0;

  constructor(readonly id: number, readonly type: EntityType, readonly container: PropertyContainer) {}

  get props(): Record<string, unknown> {
    return this.container.view;
  }
}

/** Counters of what a client received and sent. */
export interface ClientStats {
  framesIn: number;
  /** WebSocket payload bytes received. */
  bytesIn: number;
  messagesIn: number;
  aoiMessages: number;
  framesOut: number;
  bytesOut: number;
  /** Frames whose AOI part could not be read (not decoding, or a decode error). */
  undecoded: number;
}

/** A logged-in client. */
export class Client extends Emitter<ClientEvents> {
  player!: PlayerEntity;
  readonly stats: ClientStats = {
    framesIn: 0,
    bytesIn: 0,
    messagesIn: 0,
    aoiMessages: 0,
    framesOut: 0,
    bytesOut: 0,
    undecoded: 0,
  };
  /** The AOI model (client/world.ts); null before login or with `decodeAoi: false`. */
  world: ClientWorld | null = null;
  #ws!: WebSocket;
  #url: string;
  /** The live baseapps' client URLs, as the server last listed them: where a lost connection may resume. */
  #baseUrls: string[] = [];
  #opts: ConnectOptions;
  /** The resume token the server gave last; single-use. */
  #token: string | null = null;
  /** Set by close(): no resume after it. */
  #userClosed = false;
  /** Settles the resume attempt under way. */
  #resumeWait: ((r: ResumeResult) => void) | null = null;
  /** Where the baseapp of the resume attempt under way said the player is (resumeElsewhere). */
  #resumeAt: { url: string; reason: string } | null = null;
  #out = new ByteWriter(256);
  #flushQueued = false;
  #loggedIn: { resolve(): void; reject(e: Error): void } | null = null;
  #closed = false;

  private constructor(url: string, opts: ConnectOptions) {
    super();
    this.#url = url;
    this.#opts = opts;
  }

  /** Makes `ws` the connection; `first` is sent as soon as it is open (a login or a resume). */
  #use(ws: WebSocket, first: () => ClientMessage): void {
    ws.binaryType = "arraybuffer";
    this.#ws = ws;
    ws.onopen = () => {
      if (this.#ws === ws) this.sendMessage(first());
    };
    ws.onmessage = (ev) => {
      if (this.#ws === ws) this.#onFrame(ev.data);
    };
    ws.onerror = () => {};
    ws.onclose = (ev) => {
      if (this.#ws === ws) this.#onClose(ev.code, ev.reason);
    };
  }

  /** Connects to a baseapp's client URL and logs in; rejects with LoginError when refused. */
  static connect(url: string, creds: Credentials, opts: ConnectOptions): Promise<Client> {
    const c = new Client(url, opts);
    return new Promise<Client>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no login reply from ${url} within ${opts.timeoutMs ?? 15_000} ms`));
        c.close();
      }, opts.timeoutMs ?? 15_000);
      c.#loggedIn = {
        resolve: () => {
          clearTimeout(timer);
          resolve(c);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      const p = creds.position;
      c.#use(new WebSocket(url), () => ({
        id: C2S.login,
        name: creds.name,
        password: creds.password,
        spaceId: creds.spaceId ?? null,
        position: p ? [p.x, p.y, p.z] : null,
      }));
    });
  }

  /**
   * Connects to a baseapp's client URL and takes a player back with a resume token (one `resumeToken` gave, kept
   * e.g. over a page reload), no password; rejects with LoginError when the token is refused.
   */
  static async resume(url: string, token: string, opts: ConnectOptions): Promise<Client> {
    const c = new Client(url, opts);
    c.#token = token;
    let r = await c.#tryResume(url, opts.timeoutMs ?? 15_000);
    // Sent on to the baseapp holding the player: once, then again only if that one says so too.
    for (let hops = 0; !r.ok && r.next !== undefined && hops < 2; hops++) {
      c.#url = r.next;
      r = await c.#tryResume(r.next, opts.timeoutMs ?? 15_000);
    }
    if (r.ok) return c;
    c.close();
    throw new LoginError(`resume refused: ${r.reason}`);
  }

  /** The resume token the server gave last (single-use, short-lived), or null before it came. */
  get resumeToken(): string | null {
    return this.#token;
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

  /** The reference position packed positions are relative to (seed 000), as the server last set it. */
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
    return this.#resumeWait !== null;
  }

  /** True once the connection closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one session message (batched with others of this turn). */
  sendMessage(m: ClientMessage): void {
    writeClientMessage(this.#out, m);
    this.#schedule();
  }

  /** Sends raw client-protocol bytes (AOI replies, or tests of bad input). */
  send(bytes: Uint8Array): void {
    this.#out.raw(bytes);
    this.#schedule();
  }

  /** Sends raw bytes as a frame of their own right away. */
  sendFrame(bytes: Uint8Array | string): void {
    this.flush();
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.stats.framesOut++;
    this.stats.bytesOut += typeof bytes === "string" ? bytes.length : bytes.length;
    this.#ws.send(bytes);
  }

  /** Asks for AOI traffic (done after login unless `enableEntities: false`). */
  enableEntities(): void {
    this.sendMessage({ id: C2S.enableEntities });
  }

  /** Calls an exposed base method of the player. */
  callBase(name: string, ...args: unknown[]): void {
    const m = this.player.type.method("base", name);
    this.sendMessage({ id: C2S.callBase, method: m.index, args: encodeArgs(m, args) });
  }

  /** Calls an exposed cell method of the player (target null) or of an entity in the AOI. */
  callCell(target: number | null, name: string, ...args: unknown[]): void {
    const id = target ?? this.player.id;
    const type = id === this.player.id ? this.player.type : this.entities.get(id)?.type;
    if (!type) throw new Error(`entity ${id} is not in this client's AOI`);
    const m = type.method("cell", name);
    this.sendMessage({ id: C2S.callCell, target: id, typeId: type.id, method: m.index, args: encodeArgs(m, args) });
  }

  /** Reports the player's position and direction (yaw, pitch, roll in radians). */
  move(pos: Vec3, dir: [number, number, number] = [this.player.yaw, this.player.pitch, this.player.roll]): void {
    this.player.position = { ...pos };
    [this.player.yaw, this.player.pitch, this.player.roll] = dir;
    this.sendMessage({ id: C2S.position, position: [pos.x, pos.y, pos.z], direction: [...dir] });
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
    this.#flushQueued = false;
    if (this.#out.pos === 0 || this.#ws.readyState !== WebSocket.OPEN) return;
    const bytes = this.#out.toBytes();
    this.#out.reset();
    this.stats.framesOut++;
    this.stats.bytesOut += bytes.length;
    this.#ws.send(bytes);
  }

  /** Closes the connection (the server keeps the player for a grace period). */
  close(): void {
    this.#userClosed = true;
    this.flush();
    try {
      this.#ws.close(1000, "client closed");
    } catch {
      // already closed
    }
  }

  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  #onClose(code: number, reason: string): void {
    if (this.#closed) return;
    if (this.#resumeWait) {
      const settle = this.#resumeWait;
      const at = this.#resumeAt;
      this.#resumeWait = null;
      this.#resumeAt = null;
      settle(
        at
          ? { ok: false, final: false, reason: at.reason, next: at.url }
          : { ok: false, final: false, reason: `closed: ${code} ${reason}` },
      );
      return;
    }
    const resume = this.#opts.resume ?? {};
    if (isLostConnection(code) && resume !== false && !this.#userClosed && this.#token !== null && !this.#loggedIn) {
      this.#resume(resume, code, reason);
      return;
    }
    this.#closed = true;
    this.#loggedIn?.reject(new LoginError(`connection closed before login: ${code} ${reason}`));
    this.#loggedIn = null;
    this.emit("close", code, reason);
  }

  /** Takes the player back on a baseapp of `opts.urls` with the resume token; closes for good when that fails. */
  async #resume(opts: ResumeOptions, code: number, reason: string): Promise<void> {
    // Unless told where: the baseapp connected to first (a dropped connection), then the others the server listed;
    // after its baseapp was fenced, the others first (its base was restored on one of them).
    const others = this.#baseUrls.filter((u) => u !== this.#url);
    const urls = opts.urls?.length
      ? opts.urls
      : code === CloseCode.baseAppFenced
      ? [...others, this.#url]
      : [this.#url, ...others];
    const r = await retryResume(
      { ...opts, urls },
      this.#url,
      (url, ms) => this.#tryResume(url, ms),
      () => this.#userClosed,
    );
    if (r.ok) {
      this.#url = r.url;
      this.emit("resumed", r.url);
      return;
    }
    this.#closed = true;
    this.emit("close", code, `${reason || "connection lost"}; not resumed: ${r.reason}`);
  }

  /** One resume attempt on the baseapp at `url`. */
  #tryResume(url: string, timeoutMs: number): Promise<ResumeResult> {
    const token = this.#token!;
    // What was queued for the lost connection is stale (moves from before): the server starts afresh.
    this.#out.reset();
    this.#flushQueued = false;
    this.#resumeAt = null;
    return new Promise<ResumeResult>((resolve) => {
      const timer = setTimeout(() => {
        try {
          ws.close(1000, "no resume reply");
        } catch { /* already closed */ }
      }, Math.min(timeoutMs, 10_000));
      this.#resumeWait = (r) => {
        clearTimeout(timer);
        resolve(r);
      };
      const ws = new WebSocket(url);
      this.#use(ws, () => ({ id: C2S.resume, token }));
    });
  }

  #onFrame(data: unknown): void {
    if (!(data instanceof ArrayBuffer)) return;
    this.stats.framesIn++;
    this.stats.bytesIn += data.byteLength;
    const r = new ByteReader(new Uint8Array(data));
    try {
      while (r.remaining > 0) {
        const id = r.u8();
        this.stats.messagesIn++;
        if (id <= MAX_SESSION_ID) this.#onSession(readServerMessage(r, id));
        else {
          this.stats.aoiMessages++;
          if (!this.world) {
            this.stats.undecoded++;
            return;
          }
          this.world.handle(id, r);
        }
      }
      this.world?.flush();
    } catch (e) {
      this.stats.undecoded++;
      this.emit("error", 0, `undecodable frame from the server: ${(e as Error).message}`, 0);
    }
  }

  #settleResume(r: ResumeResult): void {
    const settle = this.#resumeWait;
    this.#resumeWait = null;
    settle?.(r);
  }

  #listen(w: ClientWorld): void {
    w.on("ownProperty", (ev) => this.emit("playerProperty", ev.name, ev.value));
    w.on("ownMethod", (ev) => this.emit("playerMethod", ev.name, ev.args));
    if (this.#opts.aoiEvents === false) return;
    w.on("enter", (ev) => this.emit("enter", ev.entity));
    w.on("leave", (ev) => this.emit("leave", ev.entity.id, ev.entity));
    w.on("property", (ev) => {
      const c = ev.change;
      const update = { path: ev.path, indices: c.path, kind: c.kind, start: c.start, end: c.end, byAlias: ev.byAlias };
      this.emit("property", ev.entity, ev.name, ev.value, update);
    });
    w.on("detailLevel", (ev) => this.emit("detailLevel", ev.entity, ev.level, ev.names));
    w.on("method", (ev) => this.emit("clientMethod", ev.entity, ev.name, ev.args, { byAlias: ev.byAlias }));
    w.on("move", (ev) => this.emit("move", ev.entity, { full: ev.full, byAlias: ev.byAlias }));
  }

  #onSession(m: ServerMessage): void {
    switch (m.id) {
      case S2C.loginOk: {
        const type = this.#opts.registry.byId(m.typeId);
        let container: PropertyContainer;
        if (this.#opts.decodeAoi !== false) {
          const world = new ClientWorld(this.#opts.registry, { send: (b) => this.send(b) });
          world.setPlayer(m.entityId, type);
          container = world.player!.container;
          this.#listen(world);
          this.world = world;
        } else container = new PropertyContainer(type, "ownClient", { entityId: m.entityId });
        this.player = new PlayerEntity(m.entityId, type, container);
        decodeClientState(m.ownState, container);
        if (this.#opts.enableEntities !== false) this.enableEntities();
        this.#loggedIn?.resolve();
        this.#loggedIn = null;
        this.#settleResume({ ok: true });
        return;
      }
      case S2C.loginFailed:
        this.#loggedIn?.reject(new LoginError(`login refused: ${m.reason}`));
        this.#loggedIn = null;
        this.#settleResume({ ok: false, final: true, reason: m.reason });
        return;
      case S2C.resumeToken:
        this.#token = m.token;
        return;
      case S2C.baseApps:
        this.#baseUrls = m.urls;
        return;
      case S2C.resumeElsewhere:
        // Settled when the server closes the connection, which it does next.
        if (this.#resumeWait) this.#resumeAt = { url: m.url, reason: m.reason };
        return;
      case S2C.error:
        this.emit("error", m.code, m.message, m.about);
        return;
      case S2C.forcedPosition:
        this.player.position = vec(m.position);
        [this.player.yaw, this.player.pitch, this.player.roll] = m.direction;
        this.emit("forcedPosition", vec(m.position), m.direction);
        return;
      case S2C.baseProperty: {
        const rec = readChange(new ByteReader(m.change), this.player.type);
        this.player.container.apply(rec, false);
        const p = this.player.type.properties[rec.index];
        this.emit("playerProperty", p.name, this.player.container.get(p.name));
        return;
      }
      case S2C.baseClientCall: {
        const method = this.player.type.clientMethods[m.method];
        if (method) this.emit("playerMethod", method.name, decodeArgs(method, m.args));
        return;
      }
      case S2C.cellReady:
        this.player.spaceId = m.spaceId;
        this.player.position = vec(m.position);
        this.emit("cellReady", m.spaceId, vec(m.position));
        return;
      case S2C.cellGone:
        this.emit("cellGone", m.reason);
        return;
      case S2C.loggedOut:
        return;
    }
  }
}

function vec(v: Vec3Tuple): Vec3 {
  return { x: v[0], y: v[1], z: v[2] };
}

/** Connects to a baseapp's client URL (`clientUrl` in /api/cluster) and logs in. */
export function connect(url: string, creds: Credentials, opts: ConnectOptions): Promise<Client> {
  return Client.connect(url, creds, opts);
}
