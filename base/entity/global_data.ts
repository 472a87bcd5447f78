/**
 * The global store as one baseapp holds it (KBEngine's globalData). The cellappmgr orders every change
 * (mgr/base_scripts.ts) and sends it to every baseapp; each keeps the whole store in memory for reads, writes it to
 * its database (so baseapps with separate databases each have it, and a cellappmgr that restarted takes it back
 * from them), and tells the scripts of its bases.
 */
import { errorText } from "../../core/errors.ts";
import { checkGlobalEntry, type GlobalData } from "../../core/base_script.ts";
import { BaseScriptMsg, type Channel, type GlobalEntry } from "../../core/wire/mod.ts";
import type { Logger } from "../../core/log.ts";
import type { Db } from "../../core/db/mod.ts";
import { withKvRetry } from "../persist/mod.ts";

const PREFIX = ["globalData"] as const;

/** What the baseapp's global store needs. */
export interface GlobalsHost {
  readonly log: Logger;
  /** The channel to the cellappmgr, or null while it is away. */
  mgr(): Channel | null;
  /** A value changed (undefined: deleted): the scripts hear it. */
  changed(key: string, value: unknown): void;
}

/** One baseapp's copy of the global store. */
export class BaseGlobals implements GlobalData {
  readonly #values = new Map<string, { json: string; seq: number }>();
  /** KV writes in the order the changes came. */
  #writing: Promise<void> = Promise.resolve();

  private constructor(private readonly kv: Db, private readonly host: GlobalsHost) {}

  /** Opens the store with what the database holds. */
  static async open(kv: Db, host: GlobalsHost): Promise<BaseGlobals> {
    const g = new BaseGlobals(kv, host);
    // Read whole, again if the database went away meanwhile.
    const stored = await withKvRetry(() => Array.fromAsync(kv.list<{ json: string; seq: number }>([...PREFIX])), {
      waitWhileUnavailable: true,
    });
    for (const e of stored) g.#values.set(e.key[1] as string, e.value!);
    return g;
  }

  get(key: string): unknown {
    const v = this.#values.get(key);
    // A fresh copy each time: a script changing what it read changes nothing anywhere else.
    return v === undefined ? undefined : JSON.parse(v.json);
  }

  keys(): string[] {
    return [...this.#values.keys()];
  }

  async set(key: string, value: unknown): Promise<void> {
    if (value === undefined) throw new Error(`globalData.set("${key}"): undefined is not a value; use delete`);
    const why = checkGlobalEntry(key, value);
    if (why) throw new Error(`globalData.set: ${why}`);
    await this.#send(key, JSON.stringify(value));
  }

  async delete(key: string): Promise<void> {
    const why = checkGlobalEntry(key, undefined);
    if (why) throw new Error(`globalData.delete: ${why}`);
    await this.#send(key, null);
  }

  async #send(key: string, json: string | null): Promise<void> {
    const ch = this.host.mgr();
    if (!ch) throw new Error(`globalData "${key}": the cellappmgr is not reachable; nothing was changed`);
    await ch.request(BaseScriptMsg.setGlobal, key, json);
  }

  /** A change the cellappmgr ordered: applied, written to KV in order, and told to the scripts. */
  apply([key, json, seq]: GlobalEntry): void {
    const had = this.#values.get(key);
    if (json === null ? had === undefined : had?.json === json && had.seq === seq) return;
    if (json === null) this.#values.delete(key);
    else this.#values.set(key, { json, seq });
    this.#persist(key, json === null ? null : { json, seq });
    this.host.changed(key, json === null ? undefined : JSON.parse(json));
  }

  /** On (re)registration: offers what this baseapp holds and takes the cellappmgr's store as it is. */
  async sync(): Promise<void> {
    const ch = this.host.mgr();
    if (!ch) return;
    const mine: GlobalEntry[] = [...this.#values].map(([k, v]) => [k, v.json, v.seq]);
    const theirs = await ch.request(BaseScriptMsg.syncGlobals, mine);
    const keep = new Set<string>();
    for (const e of theirs) {
      keep.add(e[0]);
      this.apply(e);
    }
    // Deleted while this baseapp was away.
    for (const k of [...this.#values.keys()]) if (!keep.has(k)) this.apply([k, null, 0]);
  }

  /** Resolves once every change so far is in the database. */
  flushed(): Promise<void> {
    return this.#writing;
  }

  #persist(key: string, v: { json: string; seq: number } | null): void {
    this.#writing = this.#writing.then(async () => {
      try {
        // Waits out an unreachable database: the writes after it queue behind it, in order.
        const wait = { waitWhileUnavailable: true };
        if (v === null) await withKvRetry(() => this.kv.delete([...PREFIX, key]), wait);
        else await withKvRetry(() => this.kv.set([...PREFIX, key], v), wait);
      } catch (e) {
        this.host.log.error(`global "${key}" was not written to the database: ${errorText(e)}`);
      }
    });
  }
}
