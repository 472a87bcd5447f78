/** Guild: a base-only entity (no cell, no client) that players join; made on the least loaded baseapp. */
import { defineEntity, T } from "../core/def/mod.ts";

/** The Guild definition: a persistent name and member list. */
export const Guild = defineEntity({
  name: "Guild",
  hasBase: true,
  hasCell: false,
  hasClient: false,
  properties: {
    name: { type: T.string(64), flags: "BASE", persistent: true, identifier: true },
    members: { type: T.array(T.ENTITY_ID, { maxLength: 100 }), flags: "BASE", persistent: true },
  },
  baseMethods: {
    /** Adds a member; the script answers with how many there are. */
    join: { args: [{ name: "member", type: T.ENTITY_ID }] },
    leave: { args: [{ name: "member", type: T.ENTITY_ID }] },
  },
});
