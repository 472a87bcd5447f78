/**
 * A small WebSocket server (RFC 6455) over raw TCP, for endpoints that face untrusted clients: bounded request heads
 * with a deadline, caps on open and half-open connections, and a per-connection message limit checked against each
 * frame's header before its payload is read.
 */
export { serveWebSocket, WsServer, type WsServerOptions, type WsServerStats } from "./server.ts";
export { WsConn } from "./conn.ts";
export {
  CLOSE_WAIT_MS,
  HIGH_WATER_BYTES,
  MAX_BUFFERED,
  WRITE_STALL_MS,
  type WsCloseInfo,
  type WsConnOptions,
  type WsConnStats,
  type WsState,
} from "./conn_options.ts";
export { CloseCode, WsProtocolError } from "./frame.ts";
export { MAX_HEAD, type RequestHead } from "./http_head.ts";
