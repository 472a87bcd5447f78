/**
 * Restoring a cell entity from its latest backup after its cellapp died (docs/faults.md, "Backups"): re-created with
 * its id, properties, position, direction, timers, movement and range triggers as the backup had them, in the cell now
 * covering its position; its script hears onRestore instead of onCreated.
 */
import { errorText } from "../../core/errors.ts";
import { type CellBackup, type EntitySnapshot, sameAddress } from "../../core/wire/mod.ts";
import type { Logger } from "../../core/log.ts";
import type { BuddyStore } from "./buddy_store.ts";
import { controllerProblem } from "./check_controllers.ts";
import { type CellBorders, type GhostInfo, isFrozen } from "../borders/mod.ts";

/** A restored entity, as restoring sets it up. */
export interface RestoredEntity {
  readonly id: number;
  baseAddress: string | null;
  hasClient: boolean;
  epoch: number;
}

/** What restoring needs of the cell that takes the entity: Cell satisfies it. */
export interface RestoreCell {
  readonly spaceId: number;
  readonly entities: ReadonlyMap<number, RestoredEntity>;
  readonly ghosts: ReadonlyMap<number, { readonly ghostInfo: GhostInfo | null }>;
  /** Its ghosts: deleteGhost(id) drops the ghost of `id`, whatever its epoch. */
  readonly borders: Pick<CellBorders, "deleteGhost">;
  restoreEntity(state: EntitySnapshot): RestoredEntity;
  callScript(e: RestoredEntity, name: string): void;
}

/**
 * Re-creates the entity of `backup` in `cell`, for its base at `baseAddress` (null: none). Its epoch goes on past the
 * backup's, as after a move, so that what its old real sent is older than anything it sends. Returns false when the
 * entity is real here already (asked again; or it had moved here after its backup).
 */
export function restoreFromBackup(
  cell: RestoreCell,
  backup: CellBackup,
  baseAddress: string | null,
  hasClient: boolean,
): boolean {
  const id = backup.entity.id;
  if (cell.entities.has(id)) return false;
  backup.entity.controllers.forEach((c, i) => {
    const problem = controllerProblem(c);
    if (problem) {
      throw new Error(`${backup.entity.type} ${id} not restored: controller ${i} of its backup: ${problem}`);
    }
  });
  // A frozen ghost here was of the real that died: the restored real takes its place and goes on with its numbering
  // (observers see a pause, not a leave and an enter). Any other ghost of it is of no live real (the cellappmgr
  // found none): it goes.
  const ghost = cell.ghosts.get(id);
  if (ghost && !(ghost.ghostInfo && isFrozen(ghost.ghostInfo))) cell.borders.deleteGhost(id);
  const e = cell.restoreEntity(backup.entity);
  e.baseAddress = baseAddress;
  e.hasClient = hasClient;
  e.epoch = backup.epoch + 1;
  cell.callScript(e, "onRestore");
  return true;
}

/**
 * The cellapp `id` at `address` died. As its buddy (`isBuddy`), asks (through `restore`, the cellappmgr) for each NPC
 * it backed up here to be re-created where its position now is; failures are logged per entity. Backups from it kept
 * by a cellapp that is no longer its buddy are stale (its NPCs went to the new buddy since): they are dropped.
 */
export function restoreNpcsOf(
  store: BuddyStore,
  id: number,
  address: string,
  isBuddy: boolean,
  log: Logger,
  restore: (backup: CellBackup) => Promise<unknown>,
): void {
  const from = store.senders().find((a) => sameAddress(a, address));
  if (from === undefined) return;
  const backups = store.backupsFrom(from);
  store.forget(from);
  if (!isBuddy) {
    log.info(`${backups.length} stale NPC backups of dead cellapp ${id} dropped: this cellapp is not its buddy now`);
    return;
  }
  log.info(`restoring ${backups.length} NPCs of dead cellapp ${id} from their backups`);
  for (const b of backups) {
    restore(b).catch((e) =>
      log.error(
        `${b.entity.type} ${b.entity.id} of dead cellapp ${id} not restored in space ${b.spaceId}: ${errorText(e)}`,
        { entity: b.entity.id, space: b.spaceId },
      )
    );
  }
}
