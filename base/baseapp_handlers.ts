/**
 * A baseapp's table of wire handlers: what it answers the cellappmgr, the cellapps and the other baseapps. Frames
 * for clients from cellapps (the relay's hot path) go straight to their proxy, unless their cellapp generation was
 * declared dead; what the cellapps say of cell entities goes to the proxy concerned; base script calls, the global
 * store, base backups and the admin's player list and kick go to their parts of the baseapp.
 */
import { errorText } from "../core/errors.ts";
import { Throttle } from "../core/log.ts";
import { moveTrace } from "../core/trace.ts";
import type { Logger } from "../core/log.ts";
import {
  BackupMsg,
  type BaseBackup,
  BaseBackupMsg,
  BaseMsg,
  BaseScriptMsg,
  type Handlers,
  type MgrLink,
  PlayerMsg,
  ProcMsg,
  readCellBackups,
  readFrames,
  RestoreMsg,
} from "../core/wire/mod.ts";
import type { BaseAppMetrics } from "./baseapp_metrics.ts";
import type { BaseGlobals, BaseScriptRuntime, Proxy } from "./entity/mod.ts";
import type { BaseBackups } from "./backup/mod.ts";
import type { LiveBaseApps } from "./cluster/mod.ts";
import { kickPlayer, listPlayers } from "./base_players.ts";

/** What the handlers reach of their baseapp. */
export interface BaseHandlersHost {
  readonly log: Logger;
  /** The proxies held, by entity id. */
  readonly proxies: ReadonlyMap<number, Proxy>;
  /** The link to the cellappmgr: which cellapp generations were declared dead. */
  readonly link: Pick<MgrLink, "isDead">;
  readonly metrics: Pick<BaseAppMetrics, "families">;
  readonly scripts: Pick<BaseScriptRuntime, "served" | "servedClient">;
  readonly globals: Pick<BaseGlobals, "apply">;
  readonly backups: Pick<BaseBackups, "keep" | "drop" | "holdsBackupOf" | "takeOf">;
  readonly liveBaseApps: Pick<LiveBaseApps, "changed">;
  /** Whether the base of `id` is here: a proxy, or one loading. */
  holdsBase(id: number): boolean;
  /** Creates a base-only entity here; resolves where it is. */
  createBase(type: string, props: Record<string, unknown>): Promise<{ id: number; address: string }>;
  /** Restores the base of `backup`, backed up by the dead baseapp `deadId`. */
  restore(backup: BaseBackup, deadId: number): Promise<void>;
}

/** Adds the baseapp's handlers to `handlers`. */
export function serveBaseApp(handlers: Handlers, host: BaseHandlersHost): void {
  const { proxies, link, log, backups } = host;
  /** Client frames from cellapp generations declared dead, logged at most once a minute per generation. */
  const staleLog = new Throttle(60_000);
  const staleFrame = (from: string, id: number, generation: number): void => {
    const held = staleLog.take(generation);
    if (held === null) return;
    log.warn(
      `dropped a frame for the client of entity ${id} from the cellapp at ${from}: its generation ${generation} ` +
        `was declared dead (fenced)${Throttle.note(held)}`,
    );
  };
  handlers
    .on(ProcMsg.metrics, () => host.metrics.families())
    .on(PlayerMsg.listPlayers, (_ch, max) => listPlayers(proxies.values(), max))
    .on(PlayerMsg.kickPlayer, (_ch, name, reason) => kickPlayer(proxies.values(), name, reason, log))
    .on(BaseMsg.cellEntityDestroyed, (ch, id, reason) => proxies.get(id)?.onCellDestroyed(reason, ch.peer.address))
    .on(
      BaseMsg.clientError,
      (_ch, id, code, about, message) => proxies.get(id)?.cellRefused(code, about, message),
    )
    .on(
      BaseMsg.cellEntityMoved,
      (ch, id, spaceId, address, epoch) => proxies.get(id)?.onCellMoved(epoch, spaceId, address, ch.peer.address),
    )
    .on(
      BaseMsg.teleported,
      (ch, id, epoch, spaceId, position, direction) =>
        proxies.get(id)?.onTeleported(epoch, spaceId, position, direction, ch.peer.address),
    )
    .on(BaseMsg.toClient, (ch, id, epoch, bytes, generation) => {
      if (link.isDead(generation)) return staleFrame(ch.peer.address, id, generation);
      proxies.get(id)?.fromCell(epoch, bytes, ch.peer.address);
    })
    .on(BaseMsg.toClients, (ch, generation, records) => {
      const from = ch.peer.address, dead = link.isDead(generation);
      if (moveTrace.on) moveTrace.mark("relaying");
      const bad = readFrames(records, (id, epoch, bytes) => {
        if (dead) staleFrame(from, id, generation);
        else proxies.get(id)?.fromCell(epoch, bytes, from);
      });
      if (moveTrace.on) {
        moveTrace.mark("relayed");
        // After the sessions' flushes, queued while relaying: each writes its client's frame to its socket at once.
        queueMicrotask(() => moveTrace.mark("written"));
      }
      if (bad) ch.drop(`bad toClients: ${bad}`);
    })
    .on(BackupMsg.cellBackup, (ch, id, backup) => proxies.get(id)?.onCellBackup(backup, ch.peer.address))
    .on(BackupMsg.cellBackups, (ch, _unused, records) => {
      const from = ch.peer.address;
      const bad = readCellBackups(records, (rec) => proxies.get(rec.id)?.onCellBackupRecord(rec, from));
      if (bad) ch.drop(`bad cellBackups: ${bad}`);
    })
    .on(RestoreMsg.cellAppDied, (_ch, _id, address) => {
      for (const p of proxies.values()) void p.onCellAppDied(address);
    })
    .on(BaseBackupMsg.baseApps, (_ch, list) => host.liveBaseApps.changed(list))
    .on(BaseScriptMsg.baseCall, (_ch, id, method, args) => host.scripts.served(id, method, args))
    .on(BaseScriptMsg.clientMessage, (_ch, id, method, args) => host.scripts.servedClient(id, method, args))
    .on(BaseScriptMsg.hasBase, (_ch, id) => proxies.has(id) && !proxies.get(id)!.loggingOut)
    .on(BaseScriptMsg.createBase, (_ch, type, props) => host.createBase(type, props))
    .on(BaseScriptMsg.globalChanged, (_ch, entry) => host.globals.apply(entry))
    .on(BaseBackupMsg.baseBackup, (ch, backup) => backups.keep(ch.peer.address, backup))
    .on(BaseBackupMsg.dropBaseBackup, (ch, id) => backups.drop(ch.peer.address, id))
    .on(
      BaseBackupMsg.whereIsBase,
      (_ch, id) => host.holdsBase(id) ? "proxy" : backups.holdsBackupOf(id) ? "backup" : null,
    )
    .on(BaseBackupMsg.baseAppDied, (_ch, id, address) => {
      for (const b of backups.takeOf(address)) {
        host.restore(b, id).catch((e) =>
          log.error(`${b.type} ${b.entityId} of dead baseapp ${id} not restored: ${errorText(e)}`)
        );
      }
    });
}
