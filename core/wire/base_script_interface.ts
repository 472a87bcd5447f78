/**
 * Messages of base scripts: base method calls from cells and other bases, cell method calls and teleports from a
 * base, direct client messages, base-only entities created on the least loaded baseapp, and the global store the
 * cellappmgr orders.
 */
import { message } from "./catalog.ts";
import { any, arrayOf, entityId, int, optional, spaceId, str, tuple, vec3 } from "./check.ts";
import type { Check } from "./check.ts";

/** Where a base is. */
export interface BaseLocation {
  id: number;
  address: string;
}

/** One global value: its key, its JSON text (null once deleted) and the cellappmgr's order number. */
export type GlobalEntry = [string, string | null, number];

const methodName = str(100);
const args = arrayOf(any, 64);
const typeName = str(100);
/** A global key; values travel as JSON text, checked again where they are parsed. */
const key = str(200);
const json = optional(str(64 * 1024));
const seq = int(0, 2 ** 53);
const props: Check = (v) =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) ? null : "expected an object";
const entry: Check = (v) => Array.isArray(v) && v.length === 3 ? tuple(key, json, seq)(v) : "expected [key, json, seq]";

/**
 * How a cellapp's refusal of cellTeleport begins when the real was not there to take it (it was changing cell just
 * then): the base asks again, along its route, which follows the real.
 */
export const NOT_TELEPORTED = "not teleported";

/** Messages of base scripts. */
export const BaseScriptMsg = {
  /** Calls base method `method` of base `entityId` here with `args`; replies with what it returns. */
  baseCall: message<[number, string, unknown[]], unknown>(
    220,
    "baseCall",
    tuple(entityId, methodName, args),
    ["cellapp", "baseapp"],
  ),
  /** Whether base `entityId` is on this baseapp (a base calling another by id looks for it). */
  hasBase: message<[number], boolean>(221, "hasBase", tuple(entityId), ["baseapp"]),
  /**
   * The base of entity `entityId` calls cell method `method` of its cell entity; the cellapp holding it (real or
   * ghost) runs it on the real and replies with what it returns. Only the entity's own baseapp may.
   */
  cellCall: message<[number, string, unknown[]], unknown>(
    222,
    "cellCall",
    tuple(entityId, methodName, args),
    ["baseapp"],
  ),
  /** A script asks for a base-only entity of `type`: the cellappmgr creates it on the least loaded baseapp. */
  createBaseAnywhere: message<[string, Record<string, unknown>], BaseLocation>(
    223,
    "createBaseAnywhere",
    tuple(typeName, props),
    ["cellapp", "baseapp"],
  ),
  /** The cellappmgr asks this baseapp to create a base-only entity of `type`; replies where it is. */
  createBase: message<[string, Record<string, unknown>], BaseLocation>(
    224,
    "createBase",
    tuple(typeName, props),
    ["cellappmgr"],
  ),
  /** A baseapp sets (JSON text) or deletes (null) a global value; the reply is its order number. */
  setGlobal: message<[string, string | null], number>(225, "setGlobal", tuple(key, json), ["baseapp"]),
  /** A global value changed: every baseapp applies it in order, persists it and tells its scripts. */
  globalChanged: message<[GlobalEntry]>(226, "globalChanged", tuple(entry), ["cellappmgr"]),
  /**
   * A baseapp (re)registered: it offers what its database holds, which a new cellappmgr that holds nothing adopts;
   * replies with every global value the cellappmgr holds.
   */
  syncGlobals: message<[GlobalEntry[]], GlobalEntry[]>(
    227,
    "syncGlobals",
    tuple(arrayOf(entry, 100_000)),
    ["baseapp"],
  ),
  /**
   * The base of entity `entityId` asks its cell entity to teleport to `position` in space `spaceId` (its own or
   * another); replies once it is there. Only the entity's own baseapp may.
   */
  cellTeleport: message<[number, number, [number, number, number]]>(
    228,
    "cellTeleport",
    tuple(entityId, spaceId, vec3),
    ["baseapp"],
  ),
  /**
   * A script calls client method `method` on the client of base `entityId` (a direct message to one player): the
   * baseapp holding it sends it on its client connection. Rejects when the base is not here or has no client.
   */
  clientMessage: message<[number, string, unknown[]]>(
    229,
    "clientMessage",
    tuple(entityId, methodName, args),
    ["cellapp", "baseapp"],
  ),
} as const;
