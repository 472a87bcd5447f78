/** The baseapp's client endpoint: an HTTP server whose WebSocket upgrades become client sessions. */
import { formatAddress } from "../core/wire/mod.ts";

/** A listening client endpoint. */
export interface ClientEndpoint {
  /** ws://HOST:PORT/ */
  readonly url: string;
  readonly port: number;
  /** Stops listening; open sockets are closed by their sessions. */
  close(): Promise<void>;
}

/**
 * Serves WebSocket upgrades on `host:port` (0 = a free port) and hands each
 * socket with the peer's address to `onSocket`; other requests get 426 with
 * a line saying how to connect.
 */
export function serveClients(
  host: string,
  port: number,
  onSocket: (ws: WebSocket, remote: string) => void,
): ClientEndpoint {
  const server = Deno.serve({ hostname: host, port, onListen: () => {} }, (req, info) => {
    if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
      return new Response("seamless baseapp: connect with a WebSocket using the client SDK (client/mod.ts)\n", {
        status: 426,
        headers: { upgrade: "websocket" },
      });
    }
    const a = info.remoteAddr as Deno.NetAddr;
    const remote = formatAddress(a.hostname, a.port);
    const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 60 });
    onSocket(socket, remote);
    return response;
  });
  const addr = server.addr as Deno.NetAddr;
  const shown = addr.hostname === "0.0.0.0" || addr.hostname === "::" ? "127.0.0.1" : addr.hostname;
  return {
    url: `ws://${formatAddress(shown, addr.port)}/`,
    port: addr.port,
    async close() {
      await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 1000))]);
    },
  };
}
