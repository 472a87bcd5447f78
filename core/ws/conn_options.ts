/** The limits, states and counters of a WebSocket connection (conn.ts), and the limits' defaults. */
import type { Logger } from "../log.ts";

/** How long a closing connection waits for the peer's close frame (or for its own to be written). */
export const CLOSE_WAIT_MS = 1000;

/** `open`: messages flow; `closing`: a close frame was sent or received; `closed`: the TCP connection ended. */
export type WsState = "open" | "closing" | "closed";

/** How a connection ended: the close code and reason of whichever side closed first (1006 when none did). */
export interface WsCloseInfo {
  code: number;
  reason: string;
}

/** Limits of one connection. */
export interface WsConnOptions {
  /** Largest message accepted, in bytes; a bigger one closes the connection with 1009. */
  maxMessage: number;
  /** A connection silent this long is pinged; silent twice as long, it is closed. */
  idleMs: number;
  /** Bytes waiting to be written above which reading from the peer pauses until they drain (default 1 MiB). */
  highWaterBytes?: number;
  /** Bytes waiting to be written beyond which the connection is dropped, reported as 1008 (default 16 MiB). */
  maxBuffered?: number;
  /**
   * A connection whose writes are behind (more than highWaterBytes waiting, or a pong waiting behind a write) and made
   * no progress for this long is dropped, reported as 1008 (default 10,000).
   */
  writeStallMs?: number;
  log?: Logger;
}

/** Default of WsConnOptions.highWaterBytes. */
export const HIGH_WATER_BYTES = 1024 * 1024;
/** Default of WsConnOptions.maxBuffered. */
export const MAX_BUFFERED = 16 * 1024 * 1024;
/** Default of WsConnOptions.writeStallMs. */
export const WRITE_STALL_MS = 10_000;

/** Counters of one connection's traffic. */
export interface WsConnStats {
  messagesIn: number;
  bytesIn: number;
  messagesOut: number;
  bytesOut: number;
  /** Socket writes; fewer than messagesOut when frames were coalesced. */
  writes: number;
  /** Pings received. */
  pingsIn: number;
  /** Pongs sent; fewer than pingsIn when pings arrived faster than their pongs could be written. */
  pongsOut: number;
  /** Times reading paused because writes fell behind. */
  readPauses: number;
}
