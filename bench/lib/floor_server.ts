/**
 * Deno side of `deno task bench floor` (bench/floor.ts): a socket server with no game in it, serving the traffic
 * bench/lib/floor_node.mjs generates (each client's message counted and dropped; every client sent one message at
 * each 100 ms tick). Prints "PORT n" once listening, then serves until killed.
 *
 *   deno run -A bench/lib/floor_server.ts --variant=tcp|ws|ws-epoll|serve|relay|back --bytes=B [--down=D] [--back=PORT]
 *
 * `tcp`: Deno.listen, 4-byte little-endian length frames, one Deno.Conn write per frame (the wire between our
 * processes works so). `ws`: the baseapp's own WebSocket server (core/ws), each tick's message written the way a
 * client session writes its frame; `ws-epoll` the same on epoll sockets (core/net). `serve`: Deno.serve with Deno.upgradeWebSocket, Deno's built-in WebSocket.
 * `relay` (with `--back=PORT`) and `back`: the two processes of the relay floor (floor_relay.ts).
 */
import { parseArgs } from "node:util";
import { serveWebSocket, type WsConn } from "../../core/ws/mod.ts";
import { readFrames, serveRelayBack, serveRelayFront } from "./floor_relay.ts";
import type { SocketKind } from "../../core/net/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  strict: true,
  options: {
    variant: { type: "string", default: "tcp" },
    bytes: { type: "string", default: "40" },
    down: { type: "string" },
    back: { type: "string" },
  },
});
/** What the server sends each client per tick: `--down` when given, else as much as a client sends (`--bytes`). */
const bytes = Number(values.down ?? values.bytes);
const payload = new Uint8Array(bytes).fill(7);
let received = 0;
const TICK_MS = 100;

function serveTcp(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.TcpConn>();
  const frame = new Uint8Array(4 + bytes);
  new DataView(frame.buffer).setUint32(0, bytes, true);
  frame.set(payload, 4);
  (async () => {
    for await (const conn of listener) {
      conn.setNoDelay(true);
      conns.add(conn);
      // A read fails when the client went away.
      void readFrames(conn, () => received++).catch(() => {}).finally(() => conns.delete(conn));
    }
  })();
  setInterval(() => {
    for (const c of conns) c.write(frame).catch(() => conns.delete(c));
  }, TICK_MS);
  return listener.addr.port;
}

function serveWs(sockets: SocketKind): number {
  const conns = new Set<WsConn>();
  const server = serveWebSocket({
    hostname: "127.0.0.1",
    port: 0,
    sockets,
    onConnection: (ws) => {
      conns.add(ws);
      ws.onMessage = () => received++;
      ws.onClose = () => conns.delete(ws);
    },
  });
  const parts = [payload];
  setInterval(() => {
    for (const ws of conns) ws.writeParts(parts);
  }, TICK_MS);
  return server.addr.port;
}

function serveDeno(): Promise<number> {
  const sockets = new Set<WebSocket>();
  return new Promise((resolve) => {
    Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      onListen: ({ port }) => resolve(port),
    }, (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.binaryType = "arraybuffer";
      socket.onopen = () => sockets.add(socket);
      socket.onmessage = () => received++;
      socket.onclose = () => sockets.delete(socket);
      return response;
    });
    setInterval(() => {
      for (const s of sockets) s.send(payload);
    }, TICK_MS);
  });
}

const port = values.variant === "tcp"
  ? serveTcp()
  : values.variant === "ws"
  ? serveWs("deno")
  : values.variant === "ws-epoll"
  ? serveWs("epoll")
  : values.variant === "serve"
  ? await serveDeno()
  : values.variant === "relay"
  ? (await serveRelayFront(Number(values.back))).port
  : values.variant === "back"
  ? serveRelayBack(bytes).port
  : (() => {
    console.error(`floor_server: --variant must be tcp, ws, serve, relay or back, not ${values.variant}`);
    Deno.exit(2);
  })();
console.log(`PORT ${port}`);
// The count keeps the read path from being optimised away and shows the load arrived.
setInterval(() => {
  if (received < 0) console.log(received);
}, 60_000);
