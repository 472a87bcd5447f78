/**
 * An in-process stand-in for the cellappmgr and one cellapp, so the baseapp's
 * side of the protocol is tested on its own: it registers the baseapp, hands
 * out entity ids, "creates" cell entities (replying with its own address as
 * the cellapp), records what the baseapp sends to cells, and can send
 * BaseMsg.toClient back over the channels the baseapp opened.
 */
import {
  BaseMsg,
  type CellEntitySpec,
  CellMsg,
  type Channel,
  Handlers,
  MgrMsg,
  type RegisterInfo,
  WireServer,
} from "../../core/wire/mod.ts";
import type { Config } from "../../core/config.ts";
import { DEFAULT_MAX_FRAME } from "../../core/wire/frame.ts";
import { silentLogger } from "../../core/log.ts";
import { waitFor } from "../helpers/wait.ts";

/** One message the baseapp sent to the fake cellapp. */
export type CellCall =
  | { kind: "enableWitness"; id: number }
  | { kind: "disableWitness"; id: number }
  | { kind: "clientCall"; caller: number; target: number; method: number; args: Uint8Array }
  | { kind: "clientPosition"; id: number; pos: [number, number, number]; dir: [number, number, number] }
  | { kind: "destroyCellEntity"; id: number };

/** The fake mgr + cellapp. */
export class FakeCluster {
  readonly server: WireServer;
  readonly specs: CellEntitySpec[] = [];
  readonly calls: CellCall[] = [];
  /** What destroyCellEntity replies per entity (persistent cell state), null when unset. */
  readonly cellState = new Map<number, Uint8Array>();
  /** Delay before createCellEntity replies; tests set it to open a window. */
  createDelayMs = 0;
  /** Make createCellEntity fail with this reason. */
  failCreate: string | null = null;
  /** What the baseapp registered with. */
  registered: RegisterInfo | null = null;
  #nextId = 1000;

  constructor() {
    const handlers = new Handlers()
      .on(MgrMsg.register, (_ch, info) => {
        this.registered = info;
        return { id: 1, mgrPid: Deno.pid };
      })
      .on(MgrMsg.allocateIds, (_ch, n) => {
        const start = this.#nextId;
        this.#nextId += n;
        return [start, this.#nextId] as [number, number];
      })
      .on(MgrMsg.createCellEntity, async (_ch, spec) => {
        if (this.createDelayMs) await new Promise((r) => setTimeout(r, this.createDelayMs));
        if (this.failCreate) throw new Error(this.failCreate);
        this.specs.push(spec);
        return { spaceId: spec.spaceId || 77, cellapp: 2, cellappAddress: this.server.address };
      })
      .on(CellMsg.enableWitness, (_ch, id) => void this.calls.push({ kind: "enableWitness", id }))
      .on(CellMsg.disableWitness, (_ch, id) => void this.calls.push({ kind: "disableWitness", id }))
      .on(CellMsg.clientCall, (_ch, caller, target, method, args) => {
        this.calls.push({ kind: "clientCall", caller, target, method, args });
      })
      .on(CellMsg.clientPosition, (_ch, id, pos, dir) => void this.calls.push({ kind: "clientPosition", id, pos, dir }))
      .on(CellMsg.destroyCellEntity, (_ch, id) => {
        this.calls.push({ kind: "destroyCellEntity", id });
        return this.cellState.get(id) ?? null;
      });
    this.server = new WireServer({ role: "cellappmgr", host: "127.0.0.1", port: 0, handlers, log: silentLogger });
  }

  /** A baseapp config pointing at this fake. */
  config(): Config {
    return {
      role: "baseapp",
      mgr: this.server.address,
      host: "127.0.0.1",
      port: 0,
      adminPort: 0,
      kv: ":memory:",
      secret: null,
      adminToken: null,
      logLevel: "warn",
      maxFrame: DEFAULT_MAX_FRAME,
      cellapps: 0,
      baseapps: 0,
      npcs: 0,
      tickHz: 10,
      clientPort: 0,
      autoAccounts: true,
      maxSpeed: 10,
      aoiRadius: 500,
      ghostRadius: 515,
    };
  }

  /** Calls of one kind so far. */
  of<K extends CellCall["kind"]>(kind: K): Extract<CellCall, { kind: K }>[] {
    return this.calls.filter((c) => c.kind === kind) as Extract<CellCall, { kind: K }>[];
  }

  /** Waits until a call matching `pred` arrived. */
  async waitCall<K extends CellCall["kind"]>(
    kind: K,
    pred: (c: Extract<CellCall, { kind: K }>) => boolean = () => true,
  ): Promise<Extract<CellCall, { kind: K }>> {
    return await waitFor(`a ${kind} at the fake cellapp`, () => this.of(kind).find(pred));
  }

  /** Sends client-protocol bytes to entity `id`'s client through the baseapp, like a witness does. */
  toClient(id: number, bytes: Uint8Array): void {
    const ch = [...this.server.channels].find((c: Channel) => c.isOpen && c.peer.role === "baseapp");
    if (!ch) throw new Error("no channel from the baseapp");
    ch.send(BaseMsg.toClient, id, bytes);
  }

  close(): void {
    this.server.close("test over");
  }
}
