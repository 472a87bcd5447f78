/** Avatar: the player character, a proxy with a cell part. */
import { defineEntity, T } from "../core/def/mod.ts";

/** One inventory slot. */
export const InventoryItem = T.dict({ itemId: T.UINT32, count: T.UINT16, bound: T.BOOL });

/** The Avatar definition. */
export const Avatar = defineEntity({
  name: "Avatar",
  proxy: true,
  hasBase: true,
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true, pitch: 50 },
  lodLevels: [
    { label: "NEAR", distance: 30, hysteresis: 5 },
    { label: "FAR", distance: 150, hysteresis: 10 },
  ],
  properties: {
    playerName: { type: T.string(32), flags: "ALL_CLIENTS", persistent: true, identifier: true },
    hp: { type: T.INT32, flags: "OTHER_CLIENTS", default: 100, detailLevel: "NEAR" },
    maxHp: { type: T.INT32, flags: "CELL_PUBLIC_AND_OWN", default: 100, persistent: true },
    level: { type: T.UINT16, flags: "ALL_CLIENTS", default: 1, persistent: true, detailLevel: "FAR" },
    inventory: {
      type: T.array(InventoryItem, { maxLength: 64 }),
      flags: "OWN_CLIENT",
      persistent: true,
    },
    aiState: { type: T.UINT8, flags: "CELL_PRIVATE" },
    gold: { type: T.UINT32, flags: "BASE_AND_CLIENT", persistent: true },
    emote: { type: T.STRING, flags: "OTHER_CLIENTS", sendLatestOnly: true },
    /** Raised by 1 on request; load tests judge ordering and gaps by what clients see of it. */
    counter: { type: T.UINT32, flags: "ALL_CLIENTS" },
    /** The Dungeon whose instance it is in (0: none). */
    instance: { type: T.ENTITY_ID, flags: "BASE" },
  },
  cellMethods: {
    useItem: { args: [{ name: "slot", type: T.UINT8 }], exposed: true },
    raiseCounter: { args: [], exposed: true },
    /** Sample travel: the avatar teleports to (x, z) of space `spaceId`. A real game checks where it may go. */
    travel: {
      args: [{ name: "spaceId", type: T.UINT32 }, { name: "x", type: T.FLOAT32 }, { name: "z", type: T.FLOAT32 }],
      exposed: true,
    },
    takeDamage: { args: [{ name: "amount", type: T.INT32 }, { name: "from", type: T.ENTITY_ID }] },
    /** Sample cell-to-base call: the cell asks its base for gold, which the base owns and saves. */
    claimReward: { args: [], exposed: true },
    /** Called by the base once it joined a guild: the avatar cheers where others see it; answers with its hp. */
    celebrate: { args: [] },
    /** Strikes `target` (the dungeon's boss) for 50 hp, wherever its real is. */
    strike: { args: [{ name: "target", type: T.ENTITY_ID }], exposed: true },
  },
  baseMethods: {
    say: { args: [{ name: "text", type: T.string(256) }], exposed: true },
    /** Sample base-to-base call: joins (creating it if need be) the guild `name`, a base-only entity. */
    joinGuild: { args: [{ name: "name", type: T.string(64) }], exposed: true },
    /** Not exposed: only the avatar's cell (or another base) may add gold; answers with the new total. */
    addGold: { args: [{ name: "amount", type: T.UINT32 }] },
    /** Opens a dungeon instance for this player and `partner` (a party of two) and brings both in. */
    openDungeon: { args: [{ name: "partner", type: T.ENTITY_ID }], exposed: true },
    /** Not exposed: the dungeon brings the avatar into its space. */
    enterInstance: { args: [{ name: "dungeon", type: T.ENTITY_ID }, { name: "spaceId", type: T.UINT32 }] },
    /** Leaves the dungeon for the default space. */
    leaveDungeon: { args: [], exposed: true },
  },
  clientMethods: {
    onEmote: { args: [{ name: "emote", type: T.STRING }], detailDistance: 40 },
    onChat: { args: [{ name: "from", type: T.ENTITY_ID }, { name: "text", type: T.STRING }] },
  },
});
