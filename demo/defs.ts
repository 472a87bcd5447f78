/**
 * The demo game's entity types, shared by its server module (mod.ts) and its page (app.ts): plain definitions
 * through the SDK's browser-safe definition API, so the bundle carries no server code.
 */
import { createRegistry, defineEntity, type EntityRegistry, T } from "../client/browser.ts";

/** How far a chat line carries, in metres. */
export const CHAT_RANGE = 80;

/** A player: a name everyone sees, and the cell holding it, which only its own client sees. */
export const Avatar = defineEntity({
  name: "Avatar",
  proxy: true,
  hasBase: true,
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    /** The account's name: a baseapp gives a new player's `playerName` (a string property) its account name. */
    playerName: { type: T.string(32), flags: "ALL_CLIENTS" },
    /** The id of the cell whose real holds the player, and that cell's cellapp (set by the cell script). */
    cell: { type: T.UINT32, flags: "OWN_CLIENT" },
    cellapp: { type: T.UINT32, flags: "OWN_CLIENT" },
  },
  cellMethods: {
    chat: { args: [{ name: "text", type: T.string(120) }], exposed: true },
  },
  clientMethods: {
    onChat: {
      args: [{ name: "from", type: T.ENTITY_ID }, { name: "name", type: T.STRING }, { name: "text", type: T.STRING }],
      detailDistance: CHAT_RANGE,
    },
  },
});

/** A wandering NPC. */
export const Wanderer = defineEntity({
  name: "Wanderer",
  hasBase: false,
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    name: { type: T.string(24), flags: "ALL_CLIENTS", default: "wanderer" },
  },
});

/** The demo's types, in this order on server and page alike. */
export const registry: EntityRegistry = createRegistry({ entities: [Avatar, Wanderer] });
