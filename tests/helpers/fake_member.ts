/**
 * Handlers for a test's own cellapp or baseapp: what the cellappmgr and the
 * cluster's processes tell every member of that role (cells to create, buddies,
 * backups, deaths), taken in and done nothing with, so that the fake is not
 * dropped for an unexpected message. A test adds the handlers it looks at.
 */
import { BackupMsg, BaseBackupMsg, CellMsg, Handlers, ProcMsg, RestoreMsg } from "../../core/wire/mod.ts";

/** Handlers with which a fake `role` member plays along with the cluster. */
export function playAlong(role: "cellapp" | "baseapp", handlers: Handlers = new Handlers()): Handlers {
  handlers.on(RestoreMsg.cellAppDied, () => {}).on(BaseBackupMsg.baseAppDied, () => {}).on(ProcMsg.fenced, () => {});
  if (role === "cellapp") {
    return handlers.on(CellMsg.createCell, () => true).on(CellMsg.updateGeometry, () => {})
      .on(CellMsg.shutDownSpace, () => {})
      .on(BackupMsg.setBuddy, () => {}).on(BackupMsg.npcBackup, () => {})
      .on(BackupMsg.npcBackups, () => {});
  }
  return handlers.on(BackupMsg.cellBackup, () => {}).on(BackupMsg.cellBackups, () => {})
    .on(BaseBackupMsg.baseApps, () => {});
}
