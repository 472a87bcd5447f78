/** Messages a baseapp handles (from cellapps), and the data they carry. */
import { message } from "./catalog.ts";
import { address, bytes, entityId, int, spaceId, str, tuple, vec3 } from "./check.ts";

const epoch = int(0, 2 ** 53);
const generation = int(0, 2 ** 53);

/** Messages a baseapp handles. */
export const BaseMsg = {
  /** The cell entity of base `entityId` was destroyed (by script, or because its space shut down). */
  cellEntityDestroyed: message<[number, string]>(
    113,
    "cellEntityDestroyed",
    tuple(entityId, str(300)),
    ["cellapp"],
  ),
  /**
   * Bytes for the client of proxy `entityId`, already in the client protocol
   * (witness updates, own-client property changes, client method calls), from
   * the real of epoch `epoch` (how many times it had moved cell): the proxy
   * passes on the current epoch's, holds later ones and drops earlier ones.
   * The last argument is the sending cellapp's registration generation (0
   * before it has one): frames of a generation declared dead are dropped.
   */
  toClient: message<[number, number, Uint8Array, number]>(
    114,
    "toClient",
    tuple(entityId, epoch, bytes(16 * 1024 * 1024), generation),
    ["cellapp"],
  ),
  /**
   * Many toClient frames as records (core/wire/client_records.ts), batched per tick on the cellapp's channel
   * (Channel.record); the first argument is the sending cellapp's registration generation.
   */
  toClients: message<[number, Uint8Array]>(
    118,
    "toClients",
    tuple(generation, bytes(16 * 1024 * 1024)),
    ["cellapp"],
  ),
  /**
   * The real of epoch `fromEpoch` of base `entityId` moved to the cellapp at
   * `cellappAddress` (in `spaceId`) and is epoch `fromEpoch + 1` there. Sent by
   * the old cellapp after its last frame for the entity's client, on the same
   * channel: it tells the proxy that the old epoch's frames are all in.
   */
  cellEntityMoved: message<[number, number, string, number]>(
    115,
    "cellEntityMoved",
    tuple(entityId, spaceId, address, epoch),
    ["cellapp"],
  ),
  /**
   * The cell refused what the client of proxy `entityId` asked (a call, a
   * cache request): the proxy answers the client with an error reply of
   * `code` about client message `about`, and counts it as abuse.
   */
  clientError: message<[number, number, number, string]>(
    116,
    "clientError",
    tuple(entityId, int(1, 255), int(0, 255), str(500)),
    ["cellapp"],
  ),
  /**
   * The real of epoch `epoch` of proxy `entityId` was teleported to `position` in `spaceId`, facing `direction`.
   * Sent by the cellapp that held it, after its last frame from where it was (before any move marker): the proxy
   * takes it in order with that epoch's frames, starts its speed check there and tells the client (forcedPosition).
   */
  teleported: message<[number, number, number, [number, number, number], [number, number, number]]>(
    117,
    "teleported",
    tuple(entityId, epoch, spaceId, vec3, vec3),
    ["cellapp"],
  ),
} as const;
