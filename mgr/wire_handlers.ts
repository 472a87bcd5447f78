/**
 * The cellappmgr's wire handler table: what its cellapps and baseapps ask of
 * it (registration, entity ids, cells for cell entities, restores, space
 * requests and load reports), each checked against who asks.
 */
import { type CellEntitySpec, type Channel, Handlers, MgrMsg, RestoreMsg, sameAddress } from "../core/wire/mod.ts";
import { cellIndexAt } from "../core/geo/mod.ts";
import type { Logger } from "../core/log.ts";
import type { Member, Registry } from "./registry.ts";
import type { IdAllocator } from "./ids.ts";
import type { Spaces } from "./spaces.ts";
import { DEFAULT_SPACE_ID } from "./space.ts";
import { restoreCellEntity } from "./restore.ts";
import { adoptClaims } from "./rejoin.ts";
import type { CellEntityPlace } from "./cell_entities.ts";
import type { CellPlaced, CellPlaceRequest } from "../core/wire/mod.ts";

/** What the handlers need of the cellappmgr. */
export interface WireHost {
  readonly registry: Registry;
  readonly spaces: Spaces;
  readonly ids: Pick<IdAllocator, "observe" | "allocate">;
  /** Resolves once the rejoin window is closed (rejoin.ts). */
  readonly rejoin: { wait(until?: Promise<unknown>): Promise<void> };
  readonly log: Logger;
  /** Silence after which a member is dropped, told to each at registration. */
  readonly deadAfterMs: number;
  /** Whether a cluster shutdown is under way: nobody registers any more. */
  shuttingDown(): boolean;
  /** Resolves once the default space exists (or could not be made). */
  ensureDefaultSpace(): Promise<void>;
  /** Makes a base's cell entity in its space (cell_entities.ts). */
  createCellEntity(spec: CellEntitySpec): Promise<CellEntityPlace>;
  /** Places a base script's cell entity (cell_entities.ts placeCellEntity). */
  placeCellEntity(spec: CellEntitySpec, req: CellPlaceRequest): Promise<CellPlaced>;
}

/** The registered process on `ch`; a process that has not registered is dropped for sending `what`. */
export function memberOn(registry: Registry, ch: Channel, what: string): Member {
  const m = registry.memberOn(ch);
  if (m) return m;
  ch.drop(`sent ${what} before registering`);
  throw new Error(`${what}: register first`);
}

/** The handlers of the cellappmgr's wire server (base scripts' own are added by base_scripts.ts). */
export function mgrHandlers(host: WireHost): Handlers {
  const member = (ch: Channel, what: string) => memberOn(host.registry, ch, what);
  return new Handlers()
    .on(MgrMsg.register, async (ch, info) => {
      if (host.shuttingDown()) throw new Error("the cluster is shutting down");
      const peer = ch.peer;
      if (info.role !== peer.role || info.pid !== peer.pid || !sameAddress(info.address, peer.address)) {
        ch.drop(
          `registers as ${info.role} pid ${info.pid} at ${info.address} but connected as ` +
            `${peer.role} pid ${peer.pid} at ${peer.address}`,
        );
        throw new Error("registration does not match the connection");
      }
      if (info.spaces && info.role !== "cellapp") {
        ch.drop(`registers as a ${info.role} that runs spaces`);
        throw new Error("only a cellapp runs spaces");
      }
      const far = host.ids.observe(info.entityIdHighWater);
      if (far) {
        ch.drop(`registers with ${far}`);
        throw new Error(far);
      }
      const deadAfterMs = host.deadAfterMs;
      const fenced = host.registry.fencedWhy(ch, info);
      if (fenced) {
        host.log.warn(
          `${info.role} pid ${info.pid} at ${info.address} is fenced: ${fenced}; it registers anew, empty`,
        );
        return { id: 0, mgrPid: Deno.pid, generation: 0, deadAfterMs, fenced, deadGenerations: [] };
      }
      // A process new to the cluster gets its id once the returning ones have theirs back.
      if (info.previousId === null) await host.rejoin.wait(ch.closed);
      if (host.shuttingDown()) throw new Error("the cluster is shutting down");
      if (!ch.isOpen) throw new Error("the connection closed before the registration");
      const m = host.registry.register(ch, info);
      if (info.spaces?.length) adoptClaims(host.spaces, m, info.spaces, host.log);
      return {
        id: m.id,
        mgrPid: Deno.pid,
        generation: m.generation,
        deadAfterMs,
        fenced: null,
        deadGenerations: host.registry.deadGenerations(),
        address: m.address,
      };
    })
    .on(MgrMsg.allocateIds, async (ch, count) => {
      member(ch, "allocateIds");
      await host.rejoin.wait(ch.closed);
      return await host.ids.allocate(count);
    })
    .on(MgrMsg.requestShutDownSpace, (ch, spaceId, why) => {
      const m = member(ch, "requestShutDownSpace");
      const space = host.spaces.all.get(spaceId);
      if (!space || space.isDefault) return;
      if (!space.cellapps().includes(m.id)) {
        host.log.warn(`cellapp ${m.id} asked to shut down space ${spaceId}, which it has no cell of; ignored`);
        return;
      }
      if (!space.hasHadEntities) {
        // A space that never held an entity is still being set up; the cell asks again after it reports.
        host.log.info(`space ${spaceId} has not had any entities; not shutting it down (asked by cellapp ${m.id})`);
        return;
      }
      host.spaces.shutDown(spaceId, `${why} (asked by cellapp ${m.id})`);
    })
    .on(MgrMsg.setSpaceSettings, (ch, spaceId, change) => {
      const m = member(ch, "setSpaceSettings");
      const space = host.spaces.all.get(spaceId);
      if (!space || space.shuttingDown || !space.cellapps().includes(m.id)) {
        throw new Error(`space ${spaceId} is not running a cell on cellapp ${m.id}`);
      }
      return host.spaces.setSettings(space, change);
    })
    .on(MgrMsg.loadReport, (ch, report) => {
      const m = member(ch, "loadReport");
      m.load = report.load;
      m.peerBytesOut = report.peerBytesOut ?? m.peerBytesOut;
      m.ghostRadius = report.ghostRadius ?? m.ghostRadius;
      host.spaces.report(m.id, report.cells);
    })
    .on(MgrMsg.createCellEntity, (ch, spec) => {
      const m = member(ch, "createCellEntity");
      if (!sameAddress(spec.baseAddress, m.address)) {
        ch.drop(`createCellEntity for entity ${spec.entityId} names the base at ${spec.baseAddress}, not itself`);
        throw new Error("a baseapp creates cell entities for its own bases only");
      }
      // A base loaded from a database this cellappmgr never saw may hold an id beyond its counter: never hand it out.
      const far = host.ids.observe(spec.entityId);
      if (far) {
        ch.drop(`createCellEntity with ${far}`);
        throw new Error(far);
      }
      return host.createCellEntity(spec);
    })
    .on(MgrMsg.placeCellEntity, (ch, spec, req) => {
      const m = member(ch, "placeCellEntity");
      if (!sameAddress(spec.baseAddress, m.address)) {
        ch.drop(`placeCellEntity for entity ${spec.entityId} names the base at ${spec.baseAddress}, not itself`);
        throw new Error("a baseapp creates cell entities for its own bases only");
      }
      const far = host.ids.observe(spec.entityId);
      if (far) {
        ch.drop(`placeCellEntity with ${far}`);
        throw new Error(far);
      }
      return host.placeCellEntity(spec, req);
    })
    .on(RestoreMsg.restoreCellEntity, async (ch, backup, baseAddress, hasClient) => {
      const m = member(ch, "restoreCellEntity");
      const own = m.role === "baseapp" ? baseAddress !== null && sameAddress(baseAddress, m.address) : !baseAddress;
      if (!own) {
        ch.drop(`restoreCellEntity for entity ${backup.entity.id} names the base at ${baseAddress}`);
        throw new Error("a baseapp restores its own bases' cell entities only, a cellapp entities without a base");
      }
      // The default space may be being made again (its cellapp died): its entities come back into the new one.
      if (backup.spaceId === DEFAULT_SPACE_ID) await host.ensureDefaultSpace();
      return restoreCellEntity(host.spaces, host.registry, backup, baseAddress, hasClient, host.log);
    })
    .on(MgrMsg.findCell, async (ch, spaceId, x, z) => {
      member(ch, "findCell");
      await host.rejoin.wait();
      const space = host.spaces.all.get(spaceId);
      if (!space || space.shuttingDown) throw new Error(`no space ${spaceId}`);
      const cell = space.cells()[cellIndexAt(space.tree, x, z)];
      const m = host.registry.members.get(cell.cellapp);
      if (!m) throw new Error(`the cellapp ${cell.cellapp} of space ${spaceId} is gone`);
      return { cellapp: m.id, address: m.address, cell: cell.id };
    });
}
