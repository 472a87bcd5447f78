/** A base's link to its cell part: the route to the cellapp, cell creation, the cell's backup, unconfirmed calls. */
export { CellBackupKeeper, type CellBackupStats } from "./cell_backup.ts";
export { type BaseCellHost, BaseCellPart, type CellNewsClient, type CellOwner, type CellState } from "./cell_part.ts";
export { type CellEntityPlace, type MgrAccess, requestCellEntity } from "./cell_request.ts";
export { CellRoute, type PeerSource } from "./cell_route.ts";
export {
  callsIn,
  MAX_UNCONFIRMED,
  type SentCall,
  UnconfirmedCalls,
  type UnconfirmedStats,
} from "./unconfirmed_calls.ts";
