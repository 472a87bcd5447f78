/**
 * Where a player appears at login. The server decides: a returning player
 * where it was saved, a new one at the spawn point of the default space. A
 * client's login may name a space and a position, but they are only a
 * request: a game hands its baseapps a placement hook that may grant it
 * (among the spaces the game allows); without one the request is ignored,
 * and a client can never make a space.
 */
import { errorText } from "./errors.ts";
import { withinWorld } from "./geo/mod.ts";

/** A space for a new space: a placement hook returns it only when the game lets that player make one. */
export const NEW_SPACE = 0;

/** A position as a placement names it: [x, y, z] in metres. */
export type PlacementPosition = [x: number, y: number, z: number];

/** A space and a position in it. */
export interface Placement {
  /** An existing space, or NEW_SPACE. */
  spaceId: number;
  /** Where in that space. */
  position: PlacementPosition;
}

/** What a placement hook is told about one login. */
export interface PlacementRequest {
  /** The account's name. */
  account: string;
  /** The id of the entity it plays. */
  entityId: number;
  /** False for an entity never saved (a new account's). */
  saved: boolean;
  /** Where the server puts the player: where it was saved, else the default space's spawn point. */
  server: Placement;
  /** What the client asked for; null where it named nothing. */
  asked: { spaceId: number | null; position: PlacementPosition | null };
}

/** A game's rule for where a login goes; return `req.server` to leave it to the server. */
export type PlacementHook = (req: PlacementRequest) => Placement | Promise<Placement>;

/** The server decides, whatever the client asked for. */
export const serverPlacement: PlacementHook = (req: PlacementRequest): Placement => req.server;

/**
 * The client chooses any existing space and any position in it (what it
 * leaves out is the server's), never a new space: for tests and load
 * generators, as `--client-spawn`.
 */
export const clientPlacement: PlacementHook = ({ server, asked }: PlacementRequest): Placement => ({
  spaceId: asked.spaceId === null || asked.spaceId === NEW_SPACE ? server.spaceId : asked.spaceId,
  position: asked.position ?? server.position,
});

/** Runs `hook` for a login and checks what it returns; rejects naming the entity and what is wrong. */
export async function placeLogin(hook: PlacementHook, req: PlacementRequest): Promise<Placement> {
  let p: Placement;
  try {
    p = await hook(req);
  } catch (e) {
    throw new Error(`the placement hook failed for entity ${req.entityId}: ${errorText(e)}`, { cause: e });
  }
  const ok = p !== null && typeof p === "object" && Number.isInteger(p.spaceId) && p.spaceId >= 0 &&
    p.spaceId < 2 ** 32 && Array.isArray(p.position) && p.position.length === 3 &&
    p.position.every(Number.isFinite) && withinWorld(p.position);
  if (!ok) {
    throw new Error(
      `the placement hook gave entity ${req.entityId} ${JSON.stringify(p)}: expected ` +
        `{ spaceId: an integer 0..2^32-1, position: [x, y, z] within the world }`,
    );
  }
  return { spaceId: p.spaceId, position: [p.position[0], p.position[1], p.position[2]] };
}
