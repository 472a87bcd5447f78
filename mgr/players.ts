/**
 * GET /api/players and POST /api/players/:name/kick: the cellappmgr asks
 * every baseapp, each within its own time, so that a stalled one delays an
 * answer by that time at most and is named in it.
 */
import { errorText } from "../core/errors.ts";
import { checkPlayerList, MAX_PLAYERS_PER_ANSWER, PlayerMsg } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import { type KickView, type PlayersView, type PlayerView, RequestError } from "../core/views.ts";
import type { Member, Registry } from "./registry.ts";

/** How long a baseapp gets to list its players: less than a stalled one takes to be declared dead (2 s). */
export const PLAYERS_TIMEOUT_MS = 1_500;
/** How long a baseapp gets to kick a player: the logout saves it first. */
const KICK_TIMEOUT_MS = 10_000;
/** Most players one GET /api/players lists. */
export const MAX_PLAYERS_LISTED = 5_000;

/** Lists the players of every baseapp, at most `limit`, by account name; names the baseapps that did not answer. */
export async function listPlayers(
  registry: Registry,
  log: Logger,
  limit: number = MAX_PLAYERS_LISTED,
  timeoutMs: number = PLAYERS_TIMEOUT_MS,
): Promise<PlayersView> {
  const max = Math.max(1, Math.min(limit, MAX_PLAYERS_PER_ANSWER));
  const check = checkPlayerList(max);
  const unanswered: PlayersView["unanswered"] = [];
  const lists = await Promise.all(
    registry.withRole("baseapp").map(async (m) => {
      try {
        const list = await m.channel.requestWithin(timeoutMs, PlayerMsg.listPlayers, max);
        const why = check(list);
        if (why) throw new Error(`its answer is not a player list: ${why}`);
        return { m, list };
      } catch (e) {
        const error = errorText(e);
        log.warn(`baseapp ${m.id} did not list its players: ${error}`);
        unanswered.push({ baseapp: m.id, error });
        return null;
      }
    }),
  );
  let total = 0;
  const players: PlayerView[] = [];
  for (const got of lists) {
    if (!got) continue;
    total += got.list.total;
    for (const p of got.list.players) players.push({ ...p, baseapp: got.m.id });
  }
  players.sort((a, b) => a.account < b.account ? -1 : a.account > b.account ? 1 : a.baseapp - b.baseapp);
  unanswered.sort((a, b) => a.baseapp - b.baseapp);
  return { players: players.slice(0, limit), total, truncated: total > Math.min(players.length, limit), unanswered };
}

/**
 * Kicks the player of account `name` from whichever baseapp holds it; 404 when none does, 503 when none does
 * among those that answered and some did not.
 */
export async function kickPlayer(registry: Registry, log: Logger, name: string, reason: string): Promise<KickView> {
  const failed: string[] = [];
  const answers = await Promise.all(
    registry.withRole("baseapp").map(async (m: Member) => {
      try {
        return (await m.channel.requestWithin(KICK_TIMEOUT_MS, PlayerMsg.kickPlayer, name, reason)) === true ? m : null;
      } catch (e) {
        failed.push(`baseapp ${m.id}: ${errorText(e)}`);
        return null;
      }
    }),
  );
  const holder = answers.find((m) => m !== null);
  if (holder) {
    log.info(`${name} was kicked from baseapp ${holder.id} through the admin API: ${reason}`);
    return { account: name, baseapp: holder.id, kicked: true };
  }
  if (failed.length) {
    throw new RequestError("unavailable", `no baseapp that answered holds ${name}; not answered: ${failed.join("; ")}`);
  }
  throw new RequestError("not_found", `no player ${JSON.stringify(name)} is online`);
}
