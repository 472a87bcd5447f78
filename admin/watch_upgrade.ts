/**
 * WebSocket upgrades on the node:http server: the upgrade request goes
 * through the same app (so through the Host and Origin guards) with the
 * socket in `env.upgrade`; the watch route takes the socket over with
 * Deno.upgradeWebSocket, and any other answer (a refusal, a 404) is written
 * back on the socket as plain HTTP before it is closed.
 */
import { errorText } from "../core/errors.ts";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Buffer } from "node:buffer";
import { STATUS_CODES } from "node:http";
import type { NodeUpgrade } from "./watch.ts";

/** A fetch-style handler that takes an environment, such as a Hono app's `fetch`. */
export type UpgradeFetch = (request: Request, env: { upgrade: NodeUpgrade }) => Response | Promise<Response>;

/** Answers one upgrade request from the node:http server's "upgrade" event. */
export async function answerUpgrade(
  fetch: UpgradeFetch,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const up: NodeUpgrade = { socket, head };
  let res: Response;
  try {
    // The Host header is checked by the app's guard; the URL only needs to parse.
    // The scheme is the one the connection came in on: the Origin guard compares a page's origin with it.
    const scheme = (socket as Socket & { encrypted?: boolean }).encrypted ? "https" : "http";
    const request = new Request(new URL(req.url ?? "/", `${scheme}://upgrade.invalid`), { headers });
    res = await fetch(request, { upgrade: up });
  } catch (e) {
    res = Response.json({ error: { code: "bad_request", message: errorText(e) } }, { status: 400 });
  }
  if (up.taken) return;
  const body = new Uint8Array(await res.arrayBuffer());
  const lines = [`HTTP/1.1 ${res.status} ${STATUS_CODES[res.status] ?? ""}`];
  res.headers.forEach((v, k) => {
    if (k !== "content-length" && k !== "connection" && k !== "transfer-encoding") lines.push(`${k}: ${v}`);
  });
  lines.push(`content-length: ${body.length}`, "connection: close", "", "");
  socket.write(lines.join("\r\n"));
  socket.end(body);
}
