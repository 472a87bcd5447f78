/** The baseapp's side of client connections below the proxies: the WebSocket endpoint, frame order, move speed. */
export { type ClientEndpoint, type ClientEndpointOptions, NOT_UPGRADE_TEXT, serveClients } from "./client_endpoint.ts";
export { ClientFrameOrder, ORDER_LIMITS, type OrderLimits, type OrderStats } from "./client_order.ts";
export { type MoveVerdict, type Pos, SpeedCheck } from "./speed_check.ts";
