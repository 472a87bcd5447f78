/**
 * The client WebSocket server and the admin API over TLS keep their limits: a connection that never completes its
 * TLS handshake (or its request head after it) is closed at the header deadline, and a TLS client is answered as a
 * plain one is.
 */
import assert from "node:assert/strict";
import { serveAdmin } from "../../admin/mod.ts";
import { serveWebSocket } from "../../core/ws/mod.ts";
import { SOCKET_KINDS } from "../../core/net/mod.ts";
import { haveOpenssl, makeTestCerts } from "../helpers/certs.ts";
import { waitFor, within } from "../../testing/wait.ts";

const openssl = await haveOpenssl();
if (!openssl) console.log("tls serve_test: skipped: no openssl command (apt-get install openssl)");

/** Resolves once the server has closed `c`. */
async function serverCloses(c: Deno.Conn): Promise<void> {
  const buf = new Uint8Array(4096);
  try {
    while ((await c.read(buf)) !== null) { /* discard */ }
  } catch {
    // reset: closed too
  }
}

for (const sockets of SOCKET_KINDS) {
  Deno.test({
    name:
      `wss:// server (${sockets} sockets): a silent TCP connection is closed at the header deadline; a TLS client gets its answer`,
    ignore: !openssl,
    async fn() {
      await using certs = await makeTestCerts();
      const tls = { cert: Deno.readTextFileSync(certs.cert), key: Deno.readTextFileSync(certs.key) };
      const server = serveWebSocket({
        hostname: "127.0.0.1",
        port: 0,
        tls,
        sockets,
        headerTimeoutMs: 300,
        onConnection: (ws) => ws.close(1000, "bye"),
      });
      try {
        const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
        await within("the server closing a connection that never says hello", serverCloses(silent), 3000);
        silent.close();
        await waitFor("the time-out counted", () => server.stats.timedOut === 1);

        const c = await Deno.connectTls({
          hostname: "127.0.0.1",
          port: server.port,
          caCerts: [Deno.readTextFileSync(certs.ca)],
        });
        await c.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        const buf = new Uint8Array(4096);
        const n = await within("an answer over TLS", c.read(buf), 3000);
        assert.match(new TextDecoder().decode(buf.subarray(0, n ?? 0)), /^HTTP\/1\.1 426 /);
        c.close();
      } finally {
        await server.close();
      }
    },
  });
}

Deno.test({
  name: "admin API over https: answers with the https scheme, and closes a connection that never completes TLS",
  ignore: !openssl,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using certs = await makeTestCerts();
    const tls = { cert: Deno.readTextFileSync(certs.cert), key: Deno.readTextFileSync(certs.key) };
    const server = await serveAdmin((req) => new Response(new URL(req.url).protocol), {
      hostname: "127.0.0.1",
      port: 0,
      headerTimeoutMs: 300,
      tls,
    });
    using client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(certs.ca)] });
    try {
      const res = await fetch(`https://127.0.0.1:${server.port}/`, { client } as RequestInit);
      assert.equal(await res.text(), "https:", "the app sees the scheme the request came in on");
      const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      await within("the front closing a connection that never says hello", serverCloses(silent), 3000);
      silent.close();
      // The fetch's idle keep-alive connection may have been timed out as well, by the plain server behind.
      assert.ok(server.timedOut >= 1, `timed out: ${server.timedOut}`);
    } finally {
      await server.close();
    }
  },
});
