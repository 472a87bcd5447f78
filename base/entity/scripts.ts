/**
 * Base scripts on a baseapp: one script object per base entity, its base methods run with their arguments
 * checked against the definition, and the calls scripts make: to other bases (here or on another baseapp, found by
 * asking the live baseapps), to their own cell entity, and for new base-only entities.
 */
import { errorText } from "../../core/errors.ts";
import {
  type BaseEntityApi,
  type BaseRef,
  type BaseScript,
  type BaseScripts,
  type CellEntityPlace,
  type CellEntityPlaced,
  type CellPart,
  checkGlobalValue,
  type ClientOf,
  type GlobalData,
  type NewSpaceOptions,
} from "../../core/base_script.ts";
import type { Vec3 } from "../../core/script.ts";
import { CellPlacement } from "./cell_placement.ts";
import { BaseScriptMsg, type Channel, RemoteError, RequestTimeoutError } from "../../core/wire/mod.ts";
import { methodArgs } from "../../core/def/mod.ts";
import type { Logger } from "../../core/log.ts";

export type { BaseEntityApi, BaseScripts } from "../../core/base_script.ts";
export type { ScriptedBase, Tuple3 } from "./scripted_base.ts";
import type { ScriptedBase } from "./scripted_base.ts";

/** What base scripts need of their baseapp. */
export interface BaseScriptHost {
  readonly log: Logger;
  /** This baseapp's address. */
  readonly address: string;
  readonly globals: GlobalData;
  /** Milliseconds a call to another process may take before it is given up. */
  readonly callTimeoutMs: number;
  /** The base `id` if it is held here. */
  local(id: number): ScriptedBase | undefined;
  /** The addresses of the other live baseapps. */
  others(): string[];
  peer(address: string): Promise<Channel>;
  /** The channel to the cellappmgr, or null while it is away. */
  mgr(): Channel | null;
}

/** Runs the base scripts of one baseapp. */
export class BaseScriptRuntime {
  /** Where bases of other baseapps were last found, by id. */
  readonly #where = new Map<number, string>();

  constructor(
    /** The script classes by type name: a game reload swaps them (base/game_swap.ts). */
    public scripts: BaseScripts,
    readonly host: BaseScriptHost,
  ) {}

  /** The script of a new base entity, or null when its type has none (a failing constructor is logged). */
  make(p: ScriptedBase): BaseScript | null {
    const cls = this.scripts[p.type.name];
    if (!cls) return null;
    try {
      return new cls(new BaseSelf(p, this));
    } catch (e) {
      this.host.log.error(
        `the base script of ${p.type.name} ${p.id} failed to construct: ${errorText(e, { stack: true })}`,
      );
      return null;
    }
  }

  /** Runs callback `hook` of the script of `p`, if it has one; an exception is logged with the entity. */
  fire(p: ScriptedBase, hook: "onCreated" | "onClientConnected" | "onClientDisconnected" | "onDestroy"): void;
  fire(p: ScriptedBase, hook: "onGlobalData", key: string, value: unknown): void;
  fire(p: ScriptedBase, hook: keyof BaseScript, ...args: unknown[]): void {
    const s = p.script as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined> | null;
    const fn = s?.[hook];
    if (typeof fn !== "function") return;
    try {
      const r = fn.apply(s, args);
      if (r instanceof Promise) r.catch((e) => this.#failed(p, hook, e));
    } catch (e) {
      this.#failed(p, hook, e);
    }
  }

  #failed(p: ScriptedBase, what: string, e: unknown): void {
    this.host.log.error(`${p.type.name} ${p.id}.${what} failed: ${errorText(e, { stack: true })}`);
  }

  /**
   * Runs base method `method` of `p` with `args`, checked and converted by the declared argument types; resolves with
   * what it returns. Throws naming the entity and method when either is unknown, the arguments do not match, or there
   * is no script for it.
   */
  async invoke(p: ScriptedBase, method: string, args: unknown[]): Promise<unknown> {
    const who = `${p.type.name} ${p.id}`;
    const values = methodArgs(p.type, "base", method, args, who);
    const fn = (p.script as unknown as Record<string, unknown> | null)?.[method];
    if (typeof fn !== "function") throw new Error(`${who} has no script for its base method '${method}'`);
    if (p.loggingOut) throw new Error(`${who} is being destroyed; ${method} was not run`);
    return await (fn as (...a: unknown[]) => unknown).apply(p.script, values);
  }

  /** A base method call from another process (baseCall): the base must be here. */
  async served(id: number, method: string, args: unknown[]): Promise<unknown> {
    const p = this.host.local(id);
    if (!p || p.loggingOut) throw new Error(`no base entity ${id} on the baseapp at ${this.host.address}`);
    return await this.invoke(p, method, args);
  }

  /** Calls base method `method` of `target`, wherever it is; see BaseEntityApi.callBase. */
  async callBase(target: number | BaseRef, method: string, args: unknown[]): Promise<unknown> {
    const id = typeof target === "number" ? target : target?.id;
    if (!Number.isInteger(id) || id <= 0) throw new Error(`callBase ${method}: ${String(id)} is not an entity id`);
    const here = this.host.local(id);
    if (here) return await this.invoke(here, method, args);
    return await this.#onBase(
      id,
      target,
      method,
      (ch) => ch.requestWithin(this.host.callTimeoutMs, BaseScriptMsg.baseCall, id, method, args),
    );
  }

  /**
   * Calls client method `method` on the client of base `target`, wherever it is (a direct message to one player);
   * see ClientOf.call.
   */
  async clientMessage(target: number | BaseRef, method: string, args: unknown[]): Promise<void> {
    const id = typeof target === "number" ? target : target?.id;
    if (!Number.isInteger(id) || id <= 0) throw new Error(`clientOf(${String(id)}).${method}: not an entity id`);
    const here = this.host.local(id);
    if (here) return this.#toClient(here, method, args);
    await this.#onBase(
      id,
      target,
      `client method ${method}`,
      (ch) => ch.requestWithin(this.host.callTimeoutMs, BaseScriptMsg.clientMessage, id, method, args),
    );
  }

  /** A direct client message from another process (clientMessage): the base must be here. */
  servedClient(id: number, method: string, args: unknown[]): void {
    const p = this.host.local(id);
    if (!p || p.loggingOut) throw new Error(`no base entity ${id} on the baseapp at ${this.host.address}`);
    this.#toClient(p, method, args);
  }

  #toClient(p: ScriptedBase, method: string, args: unknown[]): void {
    const who = `${p.type.name} ${p.id}`;
    if (!p.hasClient) throw new Error(`${who} has no client now; its client method ${method} was not sent`);
    try {
      p.callClient(method, ...args);
    } catch (e) {
      throw new Error(`client method ${method} of ${who}: ${errorText(e)}`, { cause: e });
    }
  }

  /**
   * Runs `ask` on the channel to the baseapp holding base `id` (where it was last found, where `target` says, else
   * looked for on every live baseapp, once more when it moved since); `what` names the call in errors.
   */
  async #onBase<R>(
    id: number,
    target: number | BaseRef,
    what: string,
    ask: (ch: Channel) => Promise<R>,
  ): Promise<R> {
    let address = this.#where.get(id) ?? (typeof target === "object" ? target.address : undefined);
    for (let attempt = 0; attempt < 2; attempt++) {
      address ??= await this.#find(id);
      if (!address) break;
      try {
        return await ask(await this.#peer(address));
      } catch (e) {
        const gone = e instanceof RemoteError && e.message.startsWith(`no base entity ${id} `);
        if (e instanceof RemoteError && !gone) throw e; // The base answered: its own error.
        this.#where.delete(id);
        if (e instanceof RequestTimeoutError) {
          throw new Error(
            `${what} on base ${id}: the baseapp at ${address} did not answer within ${this.host.callTimeoutMs} ms`,
            { cause: e },
          );
        }
        // Not there (restored elsewhere since), or its baseapp is unreachable (died): look again once.
        address = undefined;
      }
    }
    throw new Error(`${what} on base ${id}: no such base entity on any live baseapp`);
  }

  /** The channel to the baseapp at `address`; rejects when it cannot be reached within the call timeout. */
  #peer(address: string): Promise<Channel> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the baseapp at ${address} could not be reached`)),
        this.host.callTimeoutMs,
      );
    });
    return Promise.race([this.host.peer(address), late]).finally(() => clearTimeout(timer));
  }

  /** Asks every other live baseapp whether it holds base `id`. */
  async #find(id: number): Promise<string | undefined> {
    const asks = this.host.others().map(async (address) => {
      const ch = await this.#peer(address);
      if (!(await ch.requestWithin(this.host.callTimeoutMs, BaseScriptMsg.hasBase, id))) throw new Error("not here");
      return address;
    });
    if (asks.length === 0) return undefined;
    try {
      const address = await Promise.any(asks);
      this.#where.set(id, address);
      return address;
    } catch {
      return undefined;
    }
  }

  /** Asks the cellappmgr for a base-only entity of `type` on the least loaded baseapp. */
  async createBaseAnywhere(type: string, props: Record<string, unknown>): Promise<BaseRef> {
    const why = checkGlobalValue(props);
    if (why || typeof props !== "object" || props === null || Array.isArray(props)) {
      throw new Error(`createBaseAnywhere ${type}: the properties must be a plain object of plain values (${why})`);
    }
    const ch = this.host.mgr();
    if (!ch) throw new Error(`createBaseAnywhere ${type}: the cellappmgr is not reachable`);
    const at = await ch.requestWithin(this.host.callTimeoutMs, BaseScriptMsg.createBaseAnywhere, type, props);
    this.#where.set(at.id, at.address);
    return at;
  }

  /** Calls cell method `method` of the cell entity of `p`. */
  async callCell(p: ScriptedBase, method: string, args: unknown[]): Promise<unknown> {
    const who = `${p.type.name} ${p.id}`;
    if (!p.type.hasCell) throw new Error(`${who} has no cell part (its type has no cell)`);
    if (p.cellState !== "live") throw new Error(`${who}.cell.${method}: there is no cell entity now (${p.cellState})`);
    try {
      return await p.routeRequest(BaseScriptMsg.cellCall, p.id, method, args);
    } catch (e) {
      if (e instanceof RemoteError) throw e;
      throw new Error(`${who}.cell.${method}: its cellapp did not answer (${errorText(e)})`, { cause: e });
    }
  }
}

/** A base entity as its script sees it. */
class BaseSelf implements BaseEntityApi {
  readonly cell: CellPart;
  readonly #placement: CellPlacement;

  constructor(private readonly p: ScriptedBase, private readonly rt: BaseScriptRuntime) {
    this.#placement = new CellPlacement(p);
    this.cell = {
      get exists() {
        return p.cellState === "live";
      },
      call: (method, ...args) => rt.callCell(p, method, args),
    };
  }

  get id(): number {
    return this.p.id;
  }

  get typeName(): string {
    return this.p.type.name;
  }

  get props(): Record<string, unknown> {
    return this.p.props;
  }

  get hasClient(): boolean {
    return this.p.hasClient;
  }

  get ref(): BaseRef {
    return { id: this.p.id, address: this.rt.host.address };
  }

  get globalData(): GlobalData {
    return this.rt.host.globals;
  }

  callClient(method: string, ...args: unknown[]): void {
    this.p.callClient(method, ...args);
  }

  callBase(target: number | BaseRef, method: string, ...args: unknown[]): Promise<unknown> {
    return this.rt.callBase(target, method, args);
  }

  clientOf(player: number | BaseRef): ClientOf {
    return { call: (method, ...args) => this.rt.clientMessage(player, method, args) };
  }

  createCellEntity(where: CellEntityPlace): Promise<CellEntityPlaced> {
    return this.#placement.create(where);
  }

  createInNewSpace(options: NewSpaceOptions): Promise<CellEntityPlaced> {
    return this.#placement.createInNewSpace(options);
  }

  destroyCellEntity(): Promise<void> {
    return this.p.destroyCellByScript();
  }

  teleport(position: Vec3, spaceId?: number): Promise<void> {
    return this.#placement.teleport(position, spaceId);
  }

  createBaseAnywhere(type: string, props: Record<string, unknown> = {}): Promise<BaseRef> {
    return this.rt.createBaseAnywhere(type, props);
  }

  writeToDB(): Promise<void> {
    return this.p.writeToDB();
  }

  logout(): Promise<void> {
    return this.p.logout();
  }

  destroy(): Promise<void> {
    return this.p.logout();
  }
}
