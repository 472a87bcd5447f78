/** NPC: a cell-only entity that wanders; clients see its name and, from afar, its mood. */
import { defineEntity, T } from "../core/def/mod.ts";

/** The NPC definition. */
export const NPC = defineEntity({
  name: "NPC",
  hasBase: false,
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  lodLevels: [
    { label: "NEAR", distance: 25, hysteresis: 5 },
    { label: "FAR", distance: 200, hysteresis: 20 },
  ],
  properties: {
    name: { type: T.string(32), flags: "ALL_CLIENTS", default: "NPC" },
    mood: { type: T.UINT8, flags: "OTHER_CLIENTS", detailLevel: "FAR" },
    home: { type: T.VECTOR3, flags: "CELL_PRIVATE" },
    wanderRadius: { type: T.FLOAT32, flags: "CELL_PRIVATE", default: 10 },
    hp: { type: T.INT32, flags: "ALL_CLIENTS", default: 100 },
    /** The dungeon keeper (entities/dungeon.ts) that spawned it as a boss: told when it dies. 0: none, it never dies. */
    keeper: { type: T.ENTITY_ID, flags: "CELL_PRIVATE" },
  },
  cellMethods: {
    talkTo: { args: [{ name: "who", type: T.ENTITY_ID }], exposed: true },
    /** Takes a hit; the script answers with the hp left. */
    hit: { args: [{ name: "amount", type: T.INT32 }] },
    /** Hits another entity, wherever its real is, and reacts to the answer. */
    attack: { args: [{ name: "target", type: T.ENTITY_ID }] },
    /** Its keeper (a dungeon closing) takes it away. */
    despawn: { args: [] },
  },
  clientMethods: {
    say: { args: [{ name: "text", type: T.STRING }], detailDistance: 30 },
  },
});
