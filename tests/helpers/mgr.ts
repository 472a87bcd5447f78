/** A cellappmgr in the test's own process, on a free loopback port, with the sample game's registry. */
import { CellAppMgr, type CellAppMgrOptions } from "../../mgr/cellappmgr.ts";
import { registry } from "../../entities/mod.ts";
import { memoryLogger } from "../../testing/log.ts";

/** Starts a cellappmgr with an empty default space, no database and no rejoin window, unless `over` says otherwise. */
export async function startMgr(over: Partial<CellAppMgrOptions> = {}): Promise<CellAppMgr> {
  return await CellAppMgr.start({
    host: "127.0.0.1",
    port: 0,
    secret: null,
    maxFrame: 16 * 1024 * 1024,
    log: memoryLogger(),
    kv: null,
    registry,
    defaultSpace: { bounds: { minX: 0, minZ: 0, maxX: 100, maxZ: 100 }, npcs: 0 },
    rejoinWindowMs: 0,
    balancePeriodMs: 0,
    ...over,
  });
}
