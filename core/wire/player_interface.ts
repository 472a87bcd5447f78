/**
 * Messages by which the cellappmgr asks the baseapps about their players for
 * the admin API (GET /api/players, POST /api/players/:name/kick), and the
 * checks of what they answer.
 */
import { message } from "./catalog.ts";
import { arrayOf, bool, type Check, entityId, int, obj, optional, str, tuple, vec3 } from "./check.ts";

/** Longest account name (base/login/accounts.ts allows 1-64 characters). */
export const MAX_ACCOUNT = 64;
/** Most players one baseapp lists in one answer; the cellappmgr asks for fewer when it needs fewer. */
export const MAX_PLAYERS_PER_ANSWER = 10_000;

/** A player as its baseapp describes it. */
export interface PlayerEntry {
  account: string;
  entityId: number;
  type: string;
  /** 0 while its cell entity is not yet placed. */
  spaceId: number;
  position: [number, number, number];
  /** False while it waits for its client in the disconnect grace period. */
  connected: boolean;
  /** Milliseconds left of its disconnect grace period; null when connected. */
  graceMsLeft: number | null;
}

/** A baseapp's answer to listPlayers: at most the number asked for, and how many it holds in all. */
export interface PlayerList {
  players: PlayerEntry[];
  total: number;
}

const playerEntry: Check = obj({
  account: str(MAX_ACCOUNT),
  entityId,
  type: str(64),
  spaceId: int(0, 2 ** 32 - 1),
  position: vec3,
  connected: bool,
  graceMsLeft: optional(int(0, 2 ** 31)),
});

/** Checks a baseapp's answer to listPlayers asked for at most `max` players. */
export function checkPlayerList(max: number): Check {
  return obj({ players: arrayOf(playerEntry, max), total: int(0, 2 ** 31) });
}

/** Messages a baseapp handles for the admin API. */
export const PlayerMsg = {
  /** Lists at most `max` of its players (logged in, or in their disconnect grace). */
  listPlayers: message<[number], PlayerList>(
    60,
    "listPlayers",
    tuple(int(1, MAX_PLAYERS_PER_ANSWER)),
    ["cellappmgr"],
  ),
  /**
   * Disconnects the client of account `name` with `reason` and logs its player out (saved, as at logout); answers
   * once it is saved, true, or false when no such player is here.
   */
  kickPlayer: message<[string, string], boolean>(
    61,
    "kickPlayer",
    tuple(str(MAX_ACCOUNT), str(200)),
    ["cellappmgr"],
  ),
} as const;
