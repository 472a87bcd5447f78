/**
 * A baseapp's answers to the admin API about its players: who is here and
 * where (GET /api/players), and an operator's kick (POST /api/players/:name/kick).
 */
import type { PlayerList } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Proxy } from "./entity/mod.ts";

/** The players among `proxies` (accounts logged in or in their disconnect grace), at most `max`, by account name. */
export function listPlayers(proxies: Iterable<Proxy>, max: number, now: number = Date.now()): PlayerList {
  const players = [...proxies].filter((p) => p.type.proxy && p.accountName !== "" && !p.loggingOut);
  players.sort((a, b) => a.accountName < b.accountName ? -1 : a.accountName > b.accountName ? 1 : a.id - b.id);
  return {
    total: players.length,
    players: players.slice(0, max).map((p) => ({
      account: p.accountName,
      entityId: p.id,
      type: p.type.name,
      spaceId: p.spaceId,
      position: [...p.speed.position] as [number, number, number],
      connected: p.hasClient,
      graceMsLeft: p.hasClient || p.graceEndsAt === null ? null : Math.max(0, Math.round(p.graceEndsAt - now)),
    })),
  };
}

/**
 * Kicks the player of account `name`: its client is closed with the reason and its player logged out (saved, as
 * at logout). Resolves once it is saved: true, or false when no player of that account is here.
 */
export async function kickPlayer(
  proxies: Iterable<Proxy>,
  name: string,
  reason: string,
  log: Logger,
): Promise<boolean> {
  const proxy = [...proxies].find((p) => p.type.proxy && p.accountName === name && !p.loggingOut);
  if (!proxy) return false;
  log.info(`${name} (${proxy.type.name} ${proxy.id}) is kicked by an operator: ${reason}`);
  // The close frame carries at most 123 bytes of reason; the prefix says what happened even when the rest is cut.
  await proxy.logout(`kicked: ${reason}`);
  return true;
}
