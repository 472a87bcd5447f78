/**
 * Run by tls/cluster_test.ts in its own Deno with DENO_CERT naming the test CA (Deno's WebSocket trusts only the
 * system's CAs and DENO_CERT's): logs in through the SDK at the wss:// URL given, waits for its cell entity, and with
 * a watch ticket also opens the admin API's watch socket at the wss:// URL given. Prints one JSON line of what it saw.
 */
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { cellReady } from "../helpers/players.ts";

const [clientUrl, watchUrl] = Deno.args;
const out: Record<string, unknown> = {};
const client = await connect(clientUrl, { name: "tls-player", password: "pw", position: { x: 5, y: 0, z: 5 } }, {
  registry,
});
out.player = client.player.id;
out.space = await cellReady(client);
if (watchUrl) {
  out.watch = await new Promise((resolve, reject) => {
    const ws = new WebSocket(watchUrl);
    ws.onmessage = (e) => {
      resolve(JSON.parse(String(e.data)).op);
      ws.close();
    };
    ws.onerror = (e) => reject(new Error(`watch socket: ${(e as ErrorEvent).message}`));
  });
}
client.close();
console.log(JSON.stringify(out));
Deno.exit(0);
