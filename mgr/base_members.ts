/**
 * Baseapps joining and leaving: every baseapp hears the list of live baseapps when it changes (where its
 * bases' backups go, which client URLs a client may resume on), and every member hears when a baseapp died.
 */
import { errorText } from "../core/errors.ts";
import { type BaseAppInfo, BaseBackupMsg } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";

/** Sends the live baseapps to each of them. */
export function announceBaseApps(registry: Registry, log: Logger): void {
  const bases = registry.withRole("baseapp");
  const list: BaseAppInfo[] = bases.map((m) => ({ id: m.id, address: m.address, clientUrl: m.clientUrl }));
  for (const m of bases) {
    try {
      m.channel.send(BaseBackupMsg.baseApps, list);
    } catch (e) {
      log.warn(`could not send the live baseapps to baseapp ${m.id}: ${errorText(e)}`);
    }
  }
}

/** Tells every member that baseapp `dead` died: the holders of its backups restore its bases. */
export function announceBaseAppDeath(registry: Registry, dead: Member, log: Logger): void {
  for (const m of registry.members.values()) {
    try {
      m.channel.send(BaseBackupMsg.baseAppDied, dead.id, dead.address);
    } catch (e) {
      log.warn(`could not tell ${m.role} ${m.id} that baseapp ${dead.id} died: ${errorText(e)}`);
    }
  }
}
