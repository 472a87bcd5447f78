/** The baseapp's client endpoint: a WebSocket server (core/ws) whose connections become client sessions. */
import type { Logger } from "../../core/log.ts";
import { formatAddress } from "../../core/wire/mod.ts";
import { serveWebSocket, type WsConn } from "../../core/ws/mod.ts";
import type { SocketKind } from "../../core/net/mod.ts";

/** A listening client endpoint. */
export interface ClientEndpoint {
  /** ws://HOST:PORT/, wss:// with TLS, or the URL given as is. */
  readonly url: string;
  readonly port: number;
  /** What its sockets turned out to be. */
  readonly sockets: SocketKind;
  /** Stops listening and ends the connections still open (sessions close theirs first). */
  close(): Promise<void>;
}

/** Limits of the client endpoint; each has a default. */
export interface ClientEndpointOptions {
  /** A connection that has not sent its whole request head by then is closed (default 10,000 ms). */
  headerTimeoutMs?: number;
  /** Deno's sockets or epoll ones (core/net; default "deno"). */
  sockets?: SocketKind;
  /** Client connections open at once (default 10,000). */
  maxConnections?: number;
  /** Connections still sending their request head (default 1,000). */
  maxPending?: number;
  /** A connection silent this long is pinged, and closed when silent twice as long (default 30,000 ms). */
  idleMs?: number;
  /** The host clients reach this machine by, for the URL (default: the bound address). */
  publicHost?: string | null;
  /** PEM certificate chain and key: serve wss://. */
  tls?: { cert: string; key: string } | null;
  /** The URL clients are told as is (a TLS-terminating proxy's), instead of one built from the bound port. */
  url?: string | null;
  log?: Logger;
}

/** What a request that is no WebSocket upgrade is told. */
export const NOT_UPGRADE_TEXT = "seamless baseapp: connect with a WebSocket using the client SDK (client/mod.ts)\n";

/**
 * Serves WebSocket upgrades on `host:port` (0 = a free port) and hands each connection with the peer's address to
 * `onSocket`, which sets its callbacks and message limit; other requests get 426 with a line saying how to connect.
 */
export function serveClients(
  host: string,
  port: number,
  onSocket: (ws: WsConn, remote: string) => void,
  opts: ClientEndpointOptions = {},
): ClientEndpoint {
  const server = serveWebSocket({
    hostname: host,
    port,
    tls: opts.tls,
    sockets: opts.sockets,
    onConnection: (ws) => onSocket(ws, ws.remote),
    headerTimeoutMs: opts.headerTimeoutMs,
    maxConnections: opts.maxConnections,
    maxPending: opts.maxPending,
    idleMs: opts.idleMs,
    notUpgradeText: NOT_UPGRADE_TEXT,
    log: opts.log,
  });
  const addr = server.addr;
  // A wildcard bind stays in the URL: the cellappmgr puts the address it sees this process connect from instead.
  const shown = opts.publicHost ?? addr.hostname;
  return {
    url: opts.url ?? `${opts.tls ? "wss" : "ws"}://${formatAddress(shown, addr.port)}/`,
    port: addr.port,
    sockets: server.sockets,
    close: () => server.close(),
  };
}
