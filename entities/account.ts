/** Account: a proxy (base entity with a client) that owns a player's login. */
import { defineEntity, T } from "../core/def/mod.ts";

/** The Account definition: a persistent name and a chat message to its client. */
export const Account = defineEntity({
  name: "Account",
  proxy: true,
  hasBase: true,
  hasCell: false,
  hasClient: true,
  properties: {
    name: { type: T.string(64), flags: "BASE_AND_CLIENT", persistent: true, identifier: true },
    lastLogin: { type: T.FLOAT64, flags: "BASE", persistent: true },
  },
  baseMethods: {
    selectAvatar: { args: [{ name: "avatarName", type: T.string(64) }], exposed: true },
  },
  clientMethods: {
    chatMessage: { args: [{ name: "text", type: T.STRING }] },
  },
});
