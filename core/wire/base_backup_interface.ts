/**
 * Base backups (docs/faults.md, "Backups"): each baseapp backs its bases up to
 * another baseapp, chosen by a hash of the entity id over the live baseapps
 * the cellappmgr lists; when a baseapp dies, the holders of its backups
 * restore its bases and tell their cell entities where their base is now.
 */
import { message } from "./catalog.ts";
import { address, arrayOf, bytes, entityId, int, obj, optional, processId, str, tuple, vec3 } from "./check.ts";

/** A live baseapp, as the cellappmgr lists it. */
export interface BaseAppInfo {
  id: number;
  address: string;
  /** Where its clients connect (null when it serves none). */
  clientUrl: string | null;
}

/** One base's state as its backup baseapp keeps it: enough to restore it as a proxy awaiting its client. */
export interface BaseBackup {
  entityId: number;
  /** The entity type's name. */
  type: string;
  account: string;
  /** The persistent base properties (encodePersistentState). */
  base: Uint8Array;
  /**
   * The latest backup of its cell entity the base holds, as msgpack bytes (backup_bytes.ts): kept undecoded by the
   * backup baseapp, decoded only to restore.
   */
  cell: Uint8Array | null;
  /** Where its cell entity is: its space (0 = none) and the cellapp holding the real (null = none). */
  spaceId: number;
  cellapp: string | null;
  position: [number, number, number];
  direction: [number, number, number];
  /** The nonce of the last resume token given to its client: the only one a restoring baseapp accepts, once. */
  tokenNonce: string | null;
}

/** Where a cell entity is once it names its new base. */
export interface Rebased {
  spaceId: number;
  position: [number, number, number];
  direction: [number, number, number];
}

const baseAppInfo = obj({ id: processId, address, clientUrl: optional(str(2048)) });
const baseBackup = obj({
  entityId,
  type: str(200),
  account: str(200),
  base: bytes(1 << 20),
  cell: optional(bytes(1 << 20)),
  spaceId: int(0, 2 ** 32 - 1),
  cellapp: optional(address),
  position: vec3,
  direction: vec3,
  tokenNonce: optional(str(64)),
});

/** Messages of base backups. */
export const BaseBackupMsg = {
  /** The live baseapps (sent to every baseapp when one joins or leaves): where backups go, what clients may resume on. */
  baseApps: message<[BaseAppInfo[]]>(210, "baseApps", tuple(arrayOf(baseAppInfo, 4096)), ["cellappmgr"]),
  /** The latest state of one base of the sending baseapp, kept by this one in case the sender dies. */
  baseBackup: message<[BaseBackup]>(211, "baseBackup", tuple(baseBackup), ["baseapp"]),
  /** The base `entityId` of the sending baseapp logged out: its backup is dropped (it must not be restored). */
  dropBaseBackup: message<[number]>(214, "dropBaseBackup", tuple(entityId), ["baseapp"]),
  /** The baseapp `baseappId` at `address` died: holders of its backups restore its bases; cellapps stop sending there. */
  baseAppDied: message<[number, string]>(212, "baseAppDied", tuple(processId, address), ["cellappmgr"]),
  /**
   * The base of cell entity `entityId` is now at `baseAddress` (restored from its backup): the real here takes it as
   * its base. Replies where the real is, or null when it is not real here.
   */
  rebase: message<[number, string], Rebased | null>(213, "rebase", tuple(entityId, address), ["baseapp"]),
  /**
   * Asked by a baseapp a client resumes on that does not hold its player: whether the base of `entityId` is here, as
   * a proxy (a live one, or one restored and awaiting its client) or as a backup kept for another baseapp.
   */
  whereIsBase: message<[number], BaseHeldHere>(215, "whereIsBase", tuple(entityId), ["baseapp"]),
} as const;

/** How a baseapp holds a base (BaseBackupMsg.whereIsBase): its proxy, a backup of it, or not at all. */
export type BaseHeldHere = "proxy" | "backup" | null;

/**
 * Which live baseapp other than `selfId` backs up entity `id`: a hash of the id over them (in the order the cellappmgr
 * lists them), or null when there is no other.
 */
export function backupTarget(id: number, live: readonly BaseAppInfo[], selfId: number | null): BaseAppInfo | null {
  let n = 0;
  for (const b of live) if (b.id !== selfId) n++;
  if (n === 0) return null;
  let k = (Math.imul(id, 0x9e3779b1) >>> 0) % n;
  for (const b of live) {
    if (b.id === selfId) continue;
    if (k-- === 0) return b;
  }
  return null;
}
