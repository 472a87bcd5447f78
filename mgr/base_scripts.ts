/**
 * What the cellappmgr does for base scripts: it creates base-only entities on the least loaded baseapp,
 * and it orders the global store. Every global change gets a number from it and goes to every baseapp, which persists
 * it in its own Deno KV and tells its scripts; so baseapps with separate databases each hold the whole store, and a
 * cellappmgr that restarted empty takes the store back from the first baseapp that registers with one.
 */
import { errorText } from "../core/errors.ts";
import { BaseScriptMsg, type Channel, type GlobalEntry, type Handlers } from "../core/wire/mod.ts";
import { checkGlobalEntry } from "../core/base_script.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";

/** Most global keys the store holds. */
export const MAX_GLOBAL_KEYS = 10_000;

/** The global store as the cellappmgr orders it. */
export class GlobalStore {
  /** JSON text by key; deleted keys are dropped. */
  readonly values: Map<string, { json: string; seq: number }> = new Map();
  #seq = 0;

  /** The order number of the last change. */
  get seq(): number {
    return this.#seq;
  }

  /** Applies a change from a script; throws what is wrong with it. Returns the entry to send every baseapp. */
  set(key: string, json: string | null): GlobalEntry {
    let value: unknown = undefined;
    if (json !== null) {
      try {
        value = JSON.parse(json);
      } catch (e) {
        throw new Error(`global value of "${key}" is not JSON`, { cause: e });
      }
    }
    const why = checkGlobalEntry(key, value);
    if (why) throw new Error(why);
    if (json !== null && !this.values.has(key) && this.values.size >= MAX_GLOBAL_KEYS) {
      throw new Error(`the global store holds ${MAX_GLOBAL_KEYS} keys already; "${key}" was not added`);
    }
    const seq = ++this.#seq;
    if (json === null) this.values.delete(key);
    else this.values.set(key, { json, seq });
    return [key, json, seq];
  }

  /** Takes what a baseapp's database holds when this store never held anything (the cellappmgr restarted). */
  adopt(entries: GlobalEntry[]): number {
    if (this.#seq !== 0) return 0;
    let n = 0;
    for (const [key, json, seq] of entries) {
      if (json === null || !parses(key, json)) continue;
      this.values.set(key, { json, seq });
      this.#seq = Math.max(this.#seq, seq);
      n++;
    }
    return n;
  }

  /** Every value, as entries. */
  entries(): GlobalEntry[] {
    return [...this.values].map(([k, v]) => [k, v.json, v.seq]);
  }
}

function parses(key: string, json: string): boolean {
  try {
    return checkGlobalEntry(key, JSON.parse(json)) === null;
  } catch {
    return false;
  }
}

/** Serves base-only entity creation and the global store on the cellappmgr's handlers. */
export function serveBaseScripts(
  handlers: Handlers,
  registry: Registry,
  member: (ch: Channel, what: string) => Member,
  log: Logger,
): GlobalStore {
  const store = new GlobalStore();
  /** Bases created on each baseapp recently: a burst spreads before the load reports catch up. */
  const recent = new Map<number, number>();
  const broadcast = (entry: GlobalEntry) => {
    for (const m of registry.withRole("baseapp")) {
      try {
        m.channel.send(BaseScriptMsg.globalChanged, entry);
      } catch (e) {
        log.warn(`could not send global "${entry[0]}" to baseapp ${m.id}: ${errorText(e)}`);
      }
    }
  };
  handlers
    .on(BaseScriptMsg.createBaseAnywhere, async (ch, type, props) => {
      member(ch, "createBaseAnywhere");
      const bases = registry.withRole("baseapp");
      if (bases.length === 0) throw new Error(`no baseapp is registered to create a ${type} on`);
      const score = (m: Member) => m.load + 0.01 * (recent.get(m.id) ?? 0);
      const target = bases.reduce((a, b) => score(b) < score(a) ? b : a);
      recent.set(target.id, (recent.get(target.id) ?? 0) + 1);
      setTimeout(() => recent.set(target.id, Math.max(0, (recent.get(target.id) ?? 1) - 1)), 2000);
      return await target.channel.request(BaseScriptMsg.createBase, type, props);
    })
    .on(BaseScriptMsg.setGlobal, (ch, key, json) => {
      member(ch, "setGlobal");
      const entry = store.set(key, json);
      broadcast(entry);
      return entry[2];
    })
    .on(BaseScriptMsg.syncGlobals, (ch, offered) => {
      const m = member(ch, "syncGlobals");
      const n = store.adopt(offered);
      if (n > 0) {
        log.info(`took ${n} global value(s) from the database of baseapp ${m.id}`);
        // Baseapps that registered before it, with an empty database, hear them too.
        for (const e of store.entries()) broadcast(e);
      }
      return store.entries();
    });
  return store;
}
