import { errorText } from "../errors.ts";
import { type Channel, type ChannelOptions } from "./channel.ts";
import type { Handlers } from "./handlers.ts";
import { dial } from "./endpoint.ts";
import { MAX_LOAD, MgrMsg, type RegisterInfo, type RegisterReply } from "./mgr_interface.ts";
import type { SpaceGeometry } from "./cell_state.ts";
import type { Logger } from "../log.ts";
import type { GameVersionView } from "../views.ts";

/** How a cellapp or baseapp joins the cluster. */
export interface MemberOptions extends Omit<ChannelOptions, "role" | "heartbeatPayload"> {
  role: "cellapp" | "baseapp";
  /** The cellappmgr's address, HOST:PORT. */
  mgr: string;
  /** This process's own listening address, announced to the cellappmgr. */
  address: string;
  /** Messages the cellappmgr may send to this process. */
  handlers: Handlers;
  /** The load reported with every heartbeat. */
  load: () => number;
  /** The highest entity id this process holds or was ever given, reported when (re-)registering. */
  entityIdHighWater?: () => number;
  /** A cellapp's spaces, reported when (re-)registering so that a restarted cellappmgr learns them back. */
  spaces?: () => SpaceGeometry[];
  /** The client WebSocket URL, for baseapps that serve clients. */
  clientUrl?: () => string | null;
  log: Logger;
  /** Longest wait between two attempts to reach the cellappmgr (default RETRY_MAX_MS). */
  maxRetryMs?: number;
}

/**
 * Longest wait between two attempts to reach the cellappmgr: a restarted
 * cellappmgr hears from every live member within this (plus a connection's
 * set-up) and waits a little longer before it decides what is missing.
 */
export const RETRY_MAX_MS = 250;

/**
 * The link from a cellapp or baseapp to the cellappmgr: registers, heartbeats
 * with the load, and when the cellappmgr is not there yet or goes away, keeps
 * trying and registers again (asking for the same id) once it is back.
 */
export class MgrLink {
  /** The id the cellappmgr gave this process; kept across reconnects. */
  id: number | null = null;
  /** The open channel to the cellappmgr, or null while there is none. */
  channel: Channel | null = null;
  /** This registration's generation (RegisterReply.generation); 0 while there is none. */
  generation = 0;
  /** How long the cellappmgr waits for this process's heartbeats before declaring it dead. */
  deadAfterMs = 2000;
  /**
   * Where the others reach this process: the announced address until the cellappmgr says how it lists it
   * (RegisterReply.address), which differs when this process bound every interface (0.0.0.0 names no host).
   */
  address: string;
  /** Called after each successful (re-)registration. */
  onRegistered: ((id: number) => void) | null = null;
  /**
   * Called when the cellappmgr says this process was declared dead meanwhile (its cells were given away): it must
   * drop every cell and entity it holds, at once; it registers again as a new, empty member right after.
   */
  onFenced: ((why: string) => void) | null = null;
  /** Generations the cellappmgr declared dead (ProcMsg.fenced): what comes from them is stale. */
  readonly #dead = new Set<number>();
  #o: MemberOptions;
  #stopped = false;
  #startedAt = Date.now();
  #wake: (() => void) | null = null;
  #registered: Promise<number>;
  #resolveRegistered!: (id: number) => void;
  /** Callers of `connected` waiting for the next registration. */
  #waiting = new Set<(ch: Channel | null) => void>();

  constructor(opts: MemberOptions) {
    this.#o = opts;
    this.address = opts.address;
    this.#registered = new Promise((r) => (this.#resolveRegistered = r));
    this.#run();
  }

  /** Resolves with the id once this process has registered the first time. */
  get registered(): Promise<number> {
    return this.#registered;
  }

  /**
   * The channel to the cellappmgr once this process is registered on it: at
   * once when it is, else after the next (re-)registration. Rejects when
   * `signal` aborts first or the link is closed.
   */
  connected(signal?: AbortSignal): Promise<Channel> {
    if (this.channel) return Promise.resolve(this.channel);
    if (this.#stopped) return Promise.reject(new Error("the link to the cellappmgr is closed"));
    return new Promise<Channel>((resolve, reject) => {
      const abort = () => {
        this.#waiting.delete(done);
        reject(signal!.reason ?? new Error("aborted"));
      };
      const done = (ch: Channel | null) => {
        signal?.removeEventListener("abort", abort);
        if (ch) resolve(ch);
        else reject(new Error("the link to the cellappmgr is closed"));
      };
      if (signal?.aborted) return abort();
      signal?.addEventListener("abort", abort, { once: true });
      this.#waiting.add(done);
    });
  }

  /** Whether `generation` was declared dead by the cellappmgr (0, no generation, never is). */
  isDead(generation: number): boolean {
    return generation !== 0 && this.#dead.has(generation);
  }

  /** The game this process runs, reported when (re-)registering; its role sets it and keeps it current. */
  game: GameVersionView | null = null;

  /** Records a generation the cellappmgr declared dead. */
  markDead(generation: number): void {
    this.#dead.add(generation);
  }

  #info(): RegisterInfo {
    const o = this.#o;
    return {
      role: o.role,
      pid: Deno.pid,
      address: o.address,
      previousId: this.id,
      clientUrl: o.clientUrl?.() ?? null,
      startedAt: this.#startedAt,
      entityIdHighWater: o.entityIdHighWater?.() ?? 0,
      ...(o.spaces ? { spaces: o.spaces() } : {}),
      generation: this.generation || null,
      ...(this.game ? { game: this.game } : {}),
    };
  }

  /** Registers on `ch`; when the cellappmgr says this process was fenced, drops what it holds and registers anew. */
  async #register(ch: Channel): Promise<RegisterReply> {
    const o = this.#o;
    let reply = await ch.request(MgrMsg.register, this.#info());
    if (reply.fenced) {
      o.log.warn(`fenced by the cellappmgr at ${o.mgr}: ${reply.fenced}`);
      this.id = null;
      this.generation = 0;
      try {
        this.onFenced?.(reply.fenced);
      } catch (e) {
        o.log.error(`dropping what this process held after being fenced failed: ${errorText(e)}`);
      }
      reply = await ch.request(MgrMsg.register, this.#info());
      if (reply.fenced) throw new Error(`fenced again on registering anew: ${reply.fenced}`);
    }
    for (const g of reply.deadGenerations ?? []) this.#dead.add(g);
    return reply;
  }

  #wakeWaiting(ch: Channel | null): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const w of waiting) w(ch);
  }

  /** Stops reconnecting and closes the channel once what is queued on it is written. */
  async close(reason = "process stopping"): Promise<void> {
    this.#stopped = true;
    this.#wakeWaiting(null);
    this.#wake?.();
    const ch = this.channel;
    if (!ch) return;
    ch.close(reason);
    await ch.closed;
  }

  async #run(): Promise<void> {
    const o = this.#o;
    let delay = 100;
    let failures = 0;
    while (!this.#stopped) {
      try {
        const ch = await dial(o.mgr, {
          ...o,
          expectRoles: ["cellappmgr"],
          checkOutgoing: true,
          // A process far behind may measure a load beyond what the cellappmgr accepts: report the most it does.
          heartbeatPayload: () => ({ load: Math.min(o.load(), MAX_LOAD) }),
        });
        if (this.#stopped) {
          ch.close("process stopping");
          break;
        }
        let reply: RegisterReply;
        try {
          reply = await this.#register(ch);
        } catch (e) {
          ch.close(`registration failed: ${errorText(e)}`);
          throw e;
        }
        this.id = reply.id;
        this.generation = reply.generation ?? 0;
        this.deadAfterMs = reply.deadAfterMs ?? this.deadAfterMs;
        if (reply.address && reply.address !== this.address) {
          o.log.info(`the cellappmgr lists this ${o.role}, bound to ${o.address}, at ${reply.address}`);
          this.address = reply.address;
        }
        this.channel = ch;
        failures = 0;
        delay = 100;
        o.log.info(
          `registered with the cellappmgr at ${o.mgr} as ${o.role} ${reply.id} (generation ${this.generation})`,
        );
        this.#resolveRegistered(reply.id);
        try {
          this.onRegistered?.(reply.id);
        } catch (e) {
          o.log.error(`after registering: ${errorText(e)}`);
        }
        this.#wakeWaiting(ch);
        const reason = await ch.closed;
        this.channel = null;
        if (!this.#stopped) {
          o.log.warn(`lost the cellappmgr (${reason}); reconnecting`);
        }
      } catch (e) {
        failures++;
        const msg = `cannot reach the cellappmgr at ${o.mgr}: ${errorText(e)}; retrying`;
        // Say it once loudly, then quietly, so a waiting process does not flood the log.
        if (failures === 1) o.log.warn(msg);
        else o.log.debug(msg);
      }
      if (this.#stopped) break;
      await new Promise<void>((r) => {
        const t = setTimeout(r, delay);
        this.#wake = () => {
          clearTimeout(t);
          r();
        };
      });
      delay = Math.min(delay * 2, o.maxRetryMs ?? RETRY_MAX_MS);
    }
  }
}
