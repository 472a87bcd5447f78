/**
 * A cellapp's table of wire handlers: what it answers the cellappmgr (cells, spaces, spawns, restores, reloads aside),
 * the other cellapps (ghosts, offloads, teleports, entity calls) and the baseapps (cell entities of bases, rebases).
 * Client traffic and base calls have tables of their own (client_traffic.ts, base_calls.ts).
 */
import {
  BackupMsg,
  BaseBackupMsg,
  CellMsg,
  type Handlers,
  type MgrLink,
  ProcMsg,
  readGhostSyncs,
  readNpcBackups,
  type Rebased,
  RestoreMsg,
  type SpaceGeometry,
} from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { ProcessMetrics } from "../core/metrics.ts";
import type { Cell } from "./cell.ts";
import type { Entity } from "./entity.ts";
import type { NavMeshes } from "./nav/mod.ts";
import type { Orphans } from "./orphans.ts";
import { type BackupSender, type BuddyStore, restoreFromBackup, restoreNpcsOf } from "./backup/mod.ts";
import { cellAt, cellKey, cellOf, cellsOfSpace } from "./cell_table.ts";
import { spawnInCell } from "./create_entity.ts";
import { entityProperties } from "./inspect.ts";

/** What the handlers reach of their cellapp. */
export interface CellAppHandlersHost {
  readonly handlers: Handlers;
  /** The link to the cellappmgr: this cellapp's id once registered, and its channel. */
  readonly link: Pick<MgrLink, "id" | "registered" | "channel">;
  /** The cells by `cellKey(spaceId, cellId)`. */
  readonly cells: Map<string, Cell>;
  readonly metrics: Pick<ProcessMetrics, "families">;
  readonly navMeshes: Pick<NavMeshes, "load">;
  readonly orphans: Pick<Orphans, "claim" | "baseAppDied" | "rebase">;
  readonly backups: Pick<BackupSender, "buddy">;
  readonly buddyStore: BuddyStore;
  readonly log: Logger;
  /** Creates the cells of `g` the cellapp runs that it does not have yet (when `create`), updates the others. */
  applyGeometry(g: SpaceGeometry, create: boolean): void;
}

/** Registers the cellapp's handlers of the cellappmgr's, the other cellapps' and the baseapps' messages. */
export function serveCellApp(h: CellAppHandlersHost): void {
  h.handlers
    .on(ProcMsg.metrics, () => h.metrics.families())
    .on(CellMsg.createCell, async (_ch, g) => {
      // The registration's reply may have come in the same read, its continuation not yet run.
      if (h.link.id === null) await h.link.registered;
      // Its navigation mesh first: a geometry file that cannot be used fails the space's creation, naming the file.
      if (g.navGeometry) await h.navMeshes.load(g.navGeometry);
      h.applyGeometry(g, true);
      return true;
    })
    .on(CellMsg.updateGeometry, (_ch, g) => h.applyGeometry(g, false))
    .on(CellMsg.shutDownSpace, (_ch, spaceId) => {
      for (const cell of cellsOfSpace(h.cells, spaceId)) cell.shutDown();
    })
    .on(CellMsg.spawn, (_ch, req) =>
      spawnInCell(
        req.cellId
          ? cellOf(h.cells, req.spaceId, req.cellId)
          : cellAt(h.cells, req.spaceId, req.position?.[0], req.position?.[2]),
        req,
      ))
    .on(CellMsg.createCellEntity, async (_ch, spec) => {
      // Asked again (the first answer was lost with its cellappmgr, or its baseapp died and restored the base):
      // the entity here is the one, adopted by that base unless another base that is alive holds it.
      if (!(await h.orphans.claim(spec))) {
        cellAt(h.cells, spec.spaceId, spec.position[0], spec.position[2]).createBaseEntity(spec);
        h.log.debug(`${spec.type} ${spec.entityId} created in space ${spec.spaceId} for its base`, {
          entity: spec.entityId,
          space: spec.spaceId,
        });
      }
      return { spaceId: spec.spaceId, cellapp: h.link.id ?? 0 };
    })
    .on(
      CellMsg.entityCall,
      (_ch, spaceId, cellId, target, caller, method, args) =>
        cellOf(h.cells, spaceId, cellId, `${method} on entity ${target}`).runEntityCall(
          target,
          caller,
          method,
          args,
        ),
    )
    .on(CellMsg.createGhost, (_ch, state) => {
      cellOf(h.cells, state.spaceId, state.cellId).borders.createGhost(state);
      return true;
    })
    .on(
      CellMsg.ghostSync,
      (_ch, spaceId, cellId, id, seq, ops) =>
        h.cells.get(cellKey(spaceId, cellId))?.borders.receiveGhostSync(id, seq, ops),
    )
    .on(CellMsg.ghostSyncs, (ch, _unused, records) => {
      const bad = readGhostSyncs(
        records,
        (r) => h.cells.get(cellKey(r.spaceId, r.cellId))?.borders.receiveGhostSync(r.id, r.seq, r.ops),
      );
      if (bad) ch.drop(`bad ghostSyncs: ${bad}`);
    })
    .on(
      CellMsg.deleteGhost,
      (_ch, spaceId, cellId, id, epoch) => h.cells.get(cellKey(spaceId, cellId))?.borders.deleteGhost(id, epoch),
    )
    .on(
      CellMsg.ghostSeq,
      (_ch, spaceId, cellId, id, epoch, seq) =>
        h.cells.get(cellKey(spaceId, cellId))?.borders.receiveGhostSeq(id, epoch, seq),
    )
    .on(CellMsg.handOverWrites, (_ch, spaceId, cellId, id, writes) => {
      const cell = h.cells.get(cellKey(spaceId, cellId));
      if (cell) return cell.borders.receiveHandOverWrites(id, writes);
      h.log.warn(
        `${writes.length} changes made to entity ${id} during its hand-over are dropped: ` +
          `this cellapp has no cell ${cellId} of space ${spaceId} any more`,
      );
    })
    .on(
      CellMsg.ghostResync,
      (_ch, spaceId, cellId, id, ghostCell) =>
        h.cells.get(cellKey(spaceId, cellId))?.borders.resyncGhost(id, ghostCell),
    )
    .on(CellMsg.offload, (_ch, state) => {
      // Answered at once, unless it waits for this cell's own hand-over of the entity to settle (offload.ts).
      const taken = cellOf(h.cells, state.spaceId, state.cellId).borders.receiveOffload(state);
      return taken ? taken.then(() => true) : true;
    })
    .on(CellMsg.teleportIn, (_ch, state) => {
      cellOf(h.cells, state.spaceId, state.cellId).receiveTeleport(state);
      return true;
    })
    .on(
      CellMsg.realMoved,
      (_ch, spaceId, cellId, id, cellapp, address, cell, epoch) =>
        h.cells.get(cellKey(spaceId, cellId))?.borders.realMoved(id, { cell, cellapp, address }, epoch),
    )
    .on(BackupMsg.setBuddy, (_ch, id, address) => {
      h.backups.buddy = id !== null && address !== null ? { id, address } : null;
      h.log.info(id === null ? "no buddy cellapp: NPCs are not backed up" : `buddy cellapp ${id} at ${address}`);
    })
    .on(BackupMsg.npcBackup, (ch, backup) => h.buddyStore.put(ch.peer.address, backup))
    .on(BackupMsg.npcBackups, (ch, _unused, records) => {
      const bad = readNpcBackups(records, (r) => h.buddyStore.putRecord(ch.peer.address, r));
      if (bad) ch.drop(`bad npcBackups: ${bad}`);
    })
    .on(RestoreMsg.restoreEntity, (_ch, backup, baseAddress, hasClient) => {
      const cell = cellAt(h.cells, backup.spaceId, backup.entity.position[0], backup.entity.position[2]);
      return restoreFromBackup(cell, backup, baseAddress, hasClient);
    })
    .on(
      RestoreMsg.cellAppDied,
      (_ch, id, address, buddy) =>
        restoreNpcsOf(h.buddyStore, id, address, buddy === h.link.id, h.log, (backup) => {
          const ch = h.link.channel;
          if (!ch) return Promise.reject(new Error("the cellappmgr is not reachable"));
          return ch.request(RestoreMsg.restoreCellEntity, backup, null, false);
        }),
    )
    .on(BaseBackupMsg.baseAppDied, (_ch, _id, address) => h.orphans.baseAppDied(address))
    .on(BaseBackupMsg.rebase, (_ch, id, baseAddress): Rebased | null => {
      for (const cell of h.cells.values()) {
        const e = cell.entities.get(id);
        if (!e?.isReal || e.destroyed) continue;
        h.orphans.rebase(e, baseAddress);
        return { spaceId: cell.spaceId, position: [e.x, e.y, e.z], direction: [e.yaw, e.pitch, e.roll] };
      }
      return null;
    })
    .on(CellMsg.describeCell, (_ch, spaceId) => {
      const cells = cellsOfSpace(h.cells, spaceId);
      return cells.length === 0 ? null : cells.flatMap((c) => c.describe());
    })
    .on(CellMsg.entityProperties, (_ch, id) => entityProperties(h.cells.values(), id))
    .on(CellMsg.findEntity, (_ch, id) => {
      let found: Entity | undefined;
      for (const cell of h.cells.values()) {
        const e = cell.entities.get(id) ?? cell.ghosts.get(id);
        if (e && (!found || e.isReal)) found = e;
        if (found?.isReal) break;
      }
      if (!found) return null;
      const e = found;
      const position: [number, number, number] = [e.x, e.y, e.z];
      const ghosts = e.ghosting ? [...new Set([...e.ghosting.links.values()].map((l) => l.cellapp))] : [];
      return {
        id,
        type: e.type.name,
        spaceId: e.cell.spaceId,
        position,
        real: e.isReal,
        ghosts,
        base: e.baseAddress,
      };
    });
}
