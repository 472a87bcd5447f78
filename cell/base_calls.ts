/**
 * Cell scripts and base scripts calling each other: a cell entity calls a base method of its base at the
 * baseapp it names, a script asks the cellappmgr for a base-only entity, a base calls a cell method of its cell
 * entity, which runs on the real wherever it went (calls.ts forwards from a ghost or a departed real), and a base has
 * its cell entity teleport.
 */
import { errorText } from "../core/errors.ts";
import {
  BaseScriptMsg,
  type Channel,
  type Handlers,
  NOT_TELEPORTED,
  RemoteError,
  sameAddress,
} from "../core/wire/mod.ts";
import { checkGlobalValue } from "../core/base_script.ts";
import type { Cell } from "./cell.ts";
import type { CellBases } from "./cell_host.ts";

/** What the calls need of the cellapp. */
export interface BaseCallsHost {
  peer(address: string): Promise<Channel>;
  mgr(): Channel | null;
  timeoutMs: number;
}

/** The CellHost's `bases`: calls from cell scripts to baseapps. */
export function cellBases(host: BaseCallsHost): CellBases {
  return {
    async call(e, method, args) {
      const who = `${e.type.name} ${e.id}.base.${method}`;
      const address = e.baseAddress;
      if (address === null) throw new Error(`${who}: the entity has no base`);
      try {
        const ch = await host.peer(address);
        return await ch.requestWithin(host.timeoutMs, BaseScriptMsg.baseCall, e.id, method, args);
      } catch (err) {
        if (err instanceof RemoteError) throw err; // The base answered: its own error.
        throw new Error(
          `${who}: its baseapp at ${address} did not answer within ${host.timeoutMs} ms (${errorText(err)})`,
          { cause: err },
        );
      }
    },
    async clientMessage(player, method, args) {
      const who = `clientOf(${player.type.name} ${player.id}).${method}`;
      const address = player.baseAddress;
      if (address === null) throw new Error(`${who}: it has no base, so no client`);
      try {
        const ch = await host.peer(address);
        await ch.requestWithin(host.timeoutMs, BaseScriptMsg.clientMessage, player.id, method, args);
      } catch (err) {
        if (err instanceof RemoteError) throw new Error(`${who}: ${err.message}`, { cause: err });
        throw new Error(
          `${who}: its baseapp at ${address} did not answer within ${host.timeoutMs} ms (${errorText(err)})`,
          { cause: err },
        );
      }
    },
    async createBaseAnywhere(typeName, props) {
      const why = checkGlobalValue(props);
      if (why) throw new Error(`createBaseAnywhere ${typeName}: the properties must be plain values (${why})`);
      const ch = host.mgr();
      if (!ch) throw new Error(`createBaseAnywhere ${typeName}: the cellappmgr is not reachable`);
      return await ch.requestWithin(host.timeoutMs, BaseScriptMsg.createBaseAnywhere, typeName, props);
    },
  };
}

/** Serves cellCall: a base calling a cell method of its cell entity, on whichever cell of this cellapp knows it. */
export function serveBaseCalls(handlers: Handlers, cells: ReadonlyMap<string, Cell>): void {
  handlers.on(BaseScriptMsg.cellCall, async (ch, id, method, args) => {
    for (const cell of cells.values()) {
      const e = cell.entities.get(id) ?? cell.ghosts.get(id);
      if (!e && !cell.borders.departedTo(id)) continue;
      if (e && ch && (e.baseAddress === null || !sameAddress(e.baseAddress, ch.peer.address))) {
        throw new Error(`${e.type.name} ${id} has its base elsewhere (${e.baseAddress}); only its base may call it`);
      }
      return await cell.runEntityCall(id, id, method, args);
    }
    throw new Error(`cell.${method}: no cell entity ${id} on this cellapp (destroyed, or it moved just now)`);
  });
  handlers.on(BaseScriptMsg.cellTeleport, async (ch, id, spaceId, [x, y, z]) => {
    for (const cell of cells.values()) {
      const e = cell.entities.get(id);
      if (!e || !e.isReal || e.destroyed) continue;
      if (ch && (e.baseAddress === null || !sameAddress(e.baseAddress, ch.peer.address))) {
        throw new Error(`${e.type.name} ${id} has its base elsewhere (${e.baseAddress}); only its base may move it`);
      }
      if (e.offloading) throw new Error(`${NOT_TELEPORTED}: ${e.type.name} ${id} is being handed to another cell`);
      return await cell.teleport(e, { x, y, z }, spaceId);
    }
    throw new Error(`${NOT_TELEPORTED}: no real cell entity ${id} on this cellapp (destroyed, or it moved)`);
  });
}
