/** The cellappmgr role: registry of processes, spaces, balancing, failures. */
export { CellAppMgr, type CellAppMgrOptions } from "./cellappmgr.ts";
export { type Member, Registry } from "./registry.ts";
