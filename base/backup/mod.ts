/** Base backups: keeping bases' backups for buddy baseapps and restoring the bases of a baseapp that died. */
export { BaseBackups } from "./base_backup.ts";
export { type BaseRestoreHost, restoreBase } from "./base_restore.ts";
