/**
 * Dungeon: an instance's keeper, a base entity with a cell part and no client. Its base makes a new space for a
 * party (createInNewSpace), its cell part lives there and spawns the boss; the space shuts down once everyone left.
 */
import { defineEntity, T } from "../core/def/mod.ts";

/** The Dungeon definition. */
export const Dungeon = defineEntity({
  name: "Dungeon",
  hasBase: true,
  hasCell: true,
  hasClient: false,
  properties: {
    /** The party it was opened for. */
    party: { type: T.array(T.ENTITY_ID, { maxLength: 8 }), flags: "BASE" },
    /** Members still inside. */
    inside: { type: T.array(T.ENTITY_ID, { maxLength: 8 }), flags: "BASE" },
    /** Its space, once made (0 before). */
    spaceId: { type: T.UINT32, flags: "BASE" },
    cleared: { type: T.BOOL, flags: "BASE" },
    /** The boss its cell part spawned. */
    boss: { type: T.ENTITY_ID, flags: "CELL_PRIVATE" },
  },
  baseMethods: {
    /** Makes the instance and brings the party in; answers with the space id. */
    open: { args: [] },
    /** The cell part says the boss is dead. */
    cleared: { args: [] },
    /** A member left the instance. */
    left: { args: [{ name: "member", type: T.ENTITY_ID }] },
  },
  cellMethods: {
    /** The boss (an NPC spawned by this cell part) died. */
    bossKilled: { args: [{ name: "boss", type: T.ENTITY_ID }] },
    /** The dungeon closes: a boss still alive goes, so that the space empties. */
    close: { args: [] },
  },
});
