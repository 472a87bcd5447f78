/** Cell entity backups: sending them each period, and keeping NPC backups as a buddy. */
export { type BackupLink, BackupSender, type BackupSenderStats, DEFAULT_BACKUP_PERIOD_MS } from "./backup_sender.ts";
export { BuddyStore } from "./buddy_store.ts";
export type { BackupCell, BackupEntity } from "./types.ts";
export { type RestoreCell, type RestoredEntity, restoreFromBackup, restoreNpcsOf } from "./restore.ts";
