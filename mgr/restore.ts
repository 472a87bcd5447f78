/**
 * Restoring the cell entities of a dead cellapp: the cellappmgr tells the baseapps and cellapps which
 * cellapp died (after giving its area to the others), and places each restore in the cell now covering the backup's
 * position.
 */
import { errorText } from "../core/errors.ts";
import { type CellBackup, CellMsg, type Channel, type RestoredAt, RestoreMsg } from "../core/wire/mod.ts";
import { cellIndexAt } from "../core/geo/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";

/** How long a cellapp may take to re-create one entity. */
const RESTORE_TIMEOUT_MS = 10_000;
/** How long a cellapp may take to say whether it holds an entity. */
const FIND_TIMEOUT_MS = 5_000;

/** Tells every baseapp and cellapp that `dead` died: its bases and its buddy (`buddy`) restore what it held. */
export function announceDeath(registry: Registry, dead: Member, buddy: number | null, log: Logger): void {
  for (const m of registry.members.values()) {
    if (m.id === dead.id) continue;
    try {
      m.channel.send(RestoreMsg.cellAppDied, dead.id, dead.address, buddy);
    } catch (e) {
      log.warn(`could not tell ${m.role} ${m.id} that cellapp ${dead.id} died: ${errorText(e)}`);
    }
  }
}

/**
 * Re-creates the entity of `backup` on the cellapp whose cell covers its position in its space, unless a live
 * cellapp holds its real already (it moved there after that backup): then that is where it is, and it stays one.
 */
export async function restoreCellEntity(
  spaces: Spaces,
  registry: Registry,
  backup: CellBackup,
  baseAddress: string | null,
  hasClient: boolean,
  log: Logger,
): Promise<RestoredAt> {
  const what = `${backup.entity.type} ${backup.entity.id}`;
  const holder = await holderOf(registry, backup.entity.id, log);
  if (holder) {
    log.info(`${what} is real on cellapp ${holder.id} already: not restored from its backup`, {
      entity: backup.entity.id,
      space: holder.spaceId,
    });
    return { spaceId: holder.spaceId, cellapp: holder.id, cellappAddress: holder.address };
  }
  const space = spaces.all.get(backup.spaceId);
  if (!space) throw new Error(`${what} cannot be restored: space ${backup.spaceId} is gone`);
  if (space.shuttingDown) throw new Error(`${what} cannot be restored: space ${space.id} is shutting down`);
  await spaces.placed(space);
  const [x, , z] = backup.entity.position;
  const cell = space.cells()[cellIndexAt(space.tree, x, z)];
  const m = registry.members.get(cell.cellapp);
  if (!m) throw new Error(`${what} cannot be restored: the cellapp ${cell.cellapp} of space ${space.id} is gone`);
  await m.channel.requestWithin(RESTORE_TIMEOUT_MS, RestoreMsg.restoreEntity, backup, baseAddress, hasClient);
  return { spaceId: space.id, cellapp: m.id, cellappAddress: m.address };
}

/** The live cellapp holding the real of entity `id` (and in which space), if one does; ghosts do not count. */
export async function holderOf(
  registry: Registry,
  id: number,
  log: Logger,
): Promise<
  { id: number; address: string; spaceId: number; position: [number, number, number]; channel: Channel } | null
> {
  const found = await Promise.all(
    registry.withRole("cellapp").map(async (m) => {
      try {
        const at = await m.channel.requestWithin(FIND_TIMEOUT_MS, CellMsg.findEntity, id);
        return at?.real
          ? { id: m.id, address: m.address, spaceId: at.spaceId, position: at.position, channel: m.channel }
          : null;
      } catch (e) {
        log.warn(`cellapp ${m.id} did not say whether it holds entity ${id}: ${errorText(e)}`);
        return null;
      }
    }),
  );
  return found.find((f) => f !== null) ?? null;
}
