/** Messages a baseapp handles (from cellapps), and the data they carry. */
import { message } from "./catalog.ts";
import { bytes, int, str, tuple } from "./check.ts";

const entityId = int(1, 2 ** 53);
const spaceId = int(1, 2 ** 32 - 1);

/** Messages a baseapp handles. */
export const BaseMsg = {
  /** The cell entity of base `entityId` now lives in `spaceId` on the cellapp at `cellappAddress`. */
  cellEntityCreated: message<[number, number, string]>(
    112,
    "cellEntityCreated",
    tuple(entityId, spaceId, str(300)),
  ),
  /** The cell entity of base `entityId` was destroyed (by script, or because its space shut down). */
  cellEntityDestroyed: message<[number, string]>(113, "cellEntityDestroyed", tuple(entityId, str(300))),
  /**
   * Bytes for the client of proxy `entityId`, already in the client protocol
   * (witness updates, own-client property changes, client method calls).
   */
  toClient: message<[number, Uint8Array]>(114, "toClient", tuple(entityId, bytes(16 * 1024 * 1024))),
} as const;
