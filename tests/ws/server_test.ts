import assert from "node:assert/strict";
import { SOCKET_KINDS } from "../../core/net/mod.ts";
import {
  serveWebSocket,
  type WsCloseInfo,
  type WsConn,
  type WsServer,
  type WsServerOptions,
} from "../../core/ws/mod.ts";
import { Op } from "../../core/ws/frame.ts";
import { RawClient, upgradeRequest } from "../helpers/ws_frames.ts";
import { waitFor, within } from "../../testing/wait.ts";

const dec = new TextDecoder();

/** An echo server on a free loopback port; dispose to stop it. */
interface Echo extends AsyncDisposable {
  server: WsServer;
  port: number;
  url: string;
  conns: WsConn[];
  closes: WsCloseInfo[];
}

function startEcho(opts: Partial<WsServerOptions> = {}): Echo {
  const conns: WsConn[] = [];
  const closes: WsCloseInfo[] = [];
  const server = serveWebSocket({
    hostname: "127.0.0.1",
    port: 0,
    notUpgradeText: "use a WebSocket\n",
    onConnection: (c) => {
      conns.push(c);
      c.onMessage = (data, binary) => binary ? c.send(data) : c.sendText(dec.decode(data));
      c.onClose = (code, reason) => closes.push({ code, reason });
    },
    ...opts,
  });
  return {
    server,
    port: server.port,
    url: `ws://127.0.0.1:${server.port}/`,
    conns,
    closes,
    [Symbol.asyncDispose]: () => server.close(),
  };
}

/** Deno's own WebSocket client, open, collecting what it receives. */
async function client(
  url: string,
): Promise<{ ws: WebSocket; got: (string | Uint8Array)[]; closed: Promise<CloseEvent> }> {
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  const got: (string | Uint8Array)[] = [];
  ws.onmessage = (ev) => got.push(typeof ev.data === "string" ? ev.data : new Uint8Array(ev.data));
  const closed = new Promise<CloseEvent>((r) => ws.onclose = r);
  await new Promise((res, rej) => {
    ws.onopen = res;
    ws.onerror = () => rej(new Error(`could not connect to ${url}`));
  });
  return { ws, got, closed };
}

// Every test runs on both kinds of socket (core/net).
for (const sockets of SOCKET_KINDS) {
  Deno.test(`ws (${sockets} sockets): binary and text messages echo through Deno's WebSocket client; a client close reaches the server`, async () => {
    await using e = startEcho({ sockets, maxMessage: 1 << 20 });
    const c = await client(e.url);
    const sizes = [0, 1, 125, 126, 1000, 70_000];
    for (const n of sizes) c.ws.send(new Uint8Array(n).map((_, i) => i * 7));
    c.ws.send("héllo wörld");
    await waitFor("every echo", () => c.got.length === sizes.length + 1);
    sizes.forEach((n, i) => assert.deepEqual(c.got[i], new Uint8Array(n).map((_, j) => j * 7), `echo of ${n} bytes`));
    assert.equal(c.got[sizes.length], "héllo wörld");
    c.ws.close(4000, "bye");
    const ev = await within("the client's close event", c.closed);
    assert.equal(ev.code, 4000, "the server answers with the client's code");
    await waitFor("the server's onClose", () => e.closes.length === 1);
    assert.deepEqual(e.closes[0], { code: 4000, reason: "bye" });
    await within("the server side's end", e.conns[0].closed);
  });

  Deno.test(`ws (${sockets} sockets): fragmented messages, ping between fragments, and a close through a raw client`, async () => {
    await using e = startEcho({ sockets, maxMessage: 1 << 20 });
    const r = await RawClient.upgrade(e.port);
    try {
      await r.send(Op.text, "hello ", { fin: false });
      await r.send(Op.ping, "are you there");
      await r.send(Op.continuation, "", { fin: false });
      await r.send(Op.continuation, "wörld");
      const pong = await r.readFrame();
      assert.deepEqual([pong?.op, pong?.fin, pong?.masked], [Op.pong, true, false]);
      assert.equal(dec.decode(pong!.payload), "are you there", "a pong carries the ping's payload");
      const text = await r.readFrame();
      assert.deepEqual([text?.op, text?.fin, dec.decode(text!.payload)], [Op.text, true, "hello wörld"]);

      const parts = [new Uint8Array(100).fill(1), new Uint8Array(70_000).fill(2), new Uint8Array(3).fill(3)];
      await r.send(Op.binary, parts[0], { fin: false });
      await r.send(Op.continuation, parts[1], { fin: false });
      await r.send(Op.continuation, parts[2]);
      const bin = await r.readFrame();
      assert.equal(bin?.op, Op.binary);
      assert.deepEqual(bin!.payload, new Uint8Array([...parts[0], ...parts[1], ...parts[2]]));

      await r.send(Op.close, new Uint8Array([0x03, 0xe8, ...new TextEncoder().encode("done")]));
      assert.deepEqual(await r.readClose(), { code: 1000, reason: "" });
      assert.ok(await r.ended(), "the server ends the TCP connection after answering a close");
      await waitFor("the server's onClose", () => e.closes.length === 1);
      assert.deepEqual(e.closes[0], { code: 1000, reason: "done" });
    } finally {
      r.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): an unmasked frame, RSV bits, an unknown opcode or a long ping close with 1002`, async () => {
    await using e = startEcho({ sockets });
    const cases: [string, (r: RawClient) => Promise<void>, RegExp][] = [
      ["unmasked", (r) => r.send(Op.binary, "x", { mask: false }), /must be masked/],
      ["RSV1", (r) => r.send(Op.binary, "x", { rsv: 0x40 }), /RSV bits/],
      ["opcode 5", (r) => r.send(5, "x"), /unknown opcode 5/],
      ["a 126-byte ping", (r) => r.send(Op.ping, new Uint8Array(126)), /more than 125/],
      ["a fragmented ping", (r) => r.send(Op.ping, "x", { fin: false }), /fragmented control frame/],
    ];
    for (const [what, act, re] of cases) {
      const r = await RawClient.upgrade(e.port);
      try {
        await act(r);
        const got = await r.readClose();
        assert.equal(got?.code, 1002, what);
        assert.match(got!.reason, re, what);
        assert.ok(await r.ended(), `${what}: the connection ends`);
      } finally {
        r.close();
      }
    }
    await waitFor("every onClose", () => e.closes.length === cases.length);
    assert.ok(e.closes.every((c) => c.code === 1002), JSON.stringify(e.closes));
  });

  Deno.test(`ws (${sockets} sockets): a frame announcing 10 MiB is refused with 1009 from its header, before its payload is sent`, async () => {
    await using e = startEcho({ sockets, maxMessage: 1024 });
    const r = await RawClient.upgrade(e.port);
    try {
      const t0 = performance.now();
      // Only the header and a few payload bytes: the answer must not depend on the rest ever arriving.
      await r.send(Op.binary, new Uint8Array(16), { announce: 10 * 1024 * 1024 });
      const got = await r.readClose(1000);
      const ms = performance.now() - t0;
      assert.deepEqual(got, { code: 1009, reason: "message of 10485760 bytes exceeds the limit of 1024" });
      assert.ok(ms < 500, `the close came ${ms.toFixed(0)} ms after the header`);
      assert.ok(await r.ended(), "then the server ends the connection");
    } finally {
      r.close();
    }
    await waitFor("the server's onClose", () => e.closes.length === 1);
    assert.deepEqual(e.closes, [{ code: 1009, reason: "message of 10485760 bytes exceeds the limit of 1024" }]);
    // A fragmented message counts all its fragments.
    const f = await RawClient.upgrade(e.port);
    try {
      await f.send(Op.binary, new Uint8Array(1000), { fin: false });
      await f.send(Op.continuation, new Uint8Array(0), { announce: 25 });
      assert.deepEqual(await f.readClose(), { code: 1009, reason: "message of 1025 bytes exceeds the limit of 1024" });
    } finally {
      f.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): maxMessage can change on an open connection`, async () => {
    await using e = startEcho({ sockets, maxMessage: 100 });
    const c = await client(e.url);
    c.ws.send(new Uint8Array(100));
    await waitFor("the echo of 100 bytes", () => c.got.length === 1);
    e.conns[0].maxMessage = 50;
    c.ws.send(new Uint8Array(50));
    await waitFor("the echo of 50 bytes", () => c.got.length === 2);
    c.ws.send(new Uint8Array(51));
    const ev = await within("the client's close event", c.closed);
    assert.deepEqual([ev.code, ev.reason], [1009, "message of 51 bytes exceeds the limit of 50"]);
    assert.equal(c.got.length, 2);
    await within("the server side's end", e.conns[0].closed);
  });

  Deno.test(`ws (${sockets} sockets): a request head that never completes is closed after headerTimeoutMs`, async () => {
    await using e = startEcho({ sockets, headerTimeoutMs: 300 });
    // Taken before connecting, so the server's clock for these connections cannot have started earlier.
    const t0 = performance.now();
    const partial = await RawClient.open(e.port);
    const silent = await RawClient.open(e.port);
    try {
      await partial.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
      const [a, b] = await Promise.all([partial.ended(3000), silent.ended(3000)]);
      const ms = performance.now() - t0;
      assert.ok(a && b, "both connections were closed");
      assert.ok(ms >= 250 && ms < 1500, `closed after ${ms.toFixed(0)} ms`);
      assert.equal(e.server.stats.timedOut, 2);
      await waitFor("no pending connection", () => e.server.connections === 0);
    } finally {
      partial.close();
      silent.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): a head over 8 KiB gets 431; a request that is no upgrade 426 with the text; a malformed one 400`, async () => {
    await using e = startEcho({ sockets });
    const answer = async (request: string): Promise<string> => {
      const r = await RawClient.open(e.port);
      try {
        await r.write(request);
        return await r.readToEnd();
      } finally {
        r.close();
      }
    };
    const big = await answer(`GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(9000)}\r\n\r\n`);
    assert.match(big, /^HTTP\/1\.1 431 /);

    const res = await fetch(`http://127.0.0.1:${e.port}/`);
    assert.equal(res.status, 426);
    assert.equal(res.headers.get("upgrade"), "websocket");
    assert.equal(await res.text(), "use a WebSocket\n");

    assert.match(await answer("hello\r\n\r\n"), /^HTTP\/1\.1 400 .*malformed request line/s);
    assert.match(await answer("GET / HTTP/1.1\r\nBad Header\r\n\r\n"), /^HTTP\/1\.1 400 /);
    assert.match(await answer(upgradeRequest(e.port, { key: "short" })), /^HTTP\/1\.1 400 .*Sec-WebSocket-Key/s);
    assert.match(
      await answer(upgradeRequest(e.port).replace("Connection: Upgrade", "Connection: keep-alive")),
      /^HTTP\/1\.1 400 .*Connection/s,
    );
    assert.match(await answer(upgradeRequest(e.port).replace("GET", "POST")), /^HTTP\/1\.1 400 .*GET/s);
    const v8 = await answer(upgradeRequest(e.port, { version: "8" }));
    assert.match(v8, /^HTTP\/1\.1 426 /);
    assert.match(v8, /\r\nSec-WebSocket-Version: 13\r\n/);

    // Connection is a comma list, compared without case; the accept key is the RFC's example.
    const ok = await RawClient.open(e.port);
    try {
      await ok.write(upgradeRequest(e.port).replace("Connection: Upgrade", "Connection: keep-alive, UPGRADE"));
      const head = await ok.readHead();
      assert.match(head, /^HTTP\/1\.1 101 /);
      assert.match(head, /\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/);
      assert.doesNotMatch(head, /Sec-WebSocket-(Extensions|Protocol)/);
    } finally {
      ok.close();
    }
    assert.equal(e.server.stats.upgraded, 1);
  });

  Deno.test(`ws (${sockets} sockets): beyond maxPending or maxConnections a new connection is closed at once`, async () => {
    await using e = startEcho({ sockets, maxConnections: 3, maxPending: 2 });
    const all: RawClient[] = [];
    const open = async () => {
      const r = await RawClient.open(e.port);
      all.push(r);
      return r;
    };
    try {
      await open();
      const second = await open();
      await waitFor("two pending connections", () => e.server.pending === 2);
      assert.ok(await (await open()).ended(1000), "a third connection in the head phase is closed");
      second.close();
      await waitFor("one pending connection", () => e.server.pending === 1);
      // One pending, two upgraded: the cap of three.
      all.push(await RawClient.upgrade(e.port), await RawClient.upgrade(e.port));
      await waitFor("three connections", () => e.server.connections === 3);
      assert.ok(await (await open()).ended(1000), "a fourth connection is closed");
      assert.equal(e.server.stats.refused, 2);
      // The upgraded ones still work.
      const last = all[all.length - 2];
      await last.send(Op.binary, "still here");
      assert.equal(dec.decode((await last.readFrame())!.payload), "still here");
    } finally {
      for (const r of all) r.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): a silent connection is pinged after idleMs and closed after twice that; one that answers stays`, async () => {
    await using e = startEcho({ sockets, idleMs: 200 });
    const quiet = await RawClient.upgrade(e.port);
    const alive = await RawClient.upgrade(e.port);
    try {
      const t0 = performance.now();
      const keep = (async () => {
        // Answers every ping for a while.
        while (performance.now() - t0 < 900) {
          const f = await alive.readFrame(1000).catch(() => null);
          if (f?.op === Op.ping) await alive.send(Op.pong, f.payload);
          else if (f) return f;
        }
        return null;
      })();
      const ping = await quiet.readFrame(1000);
      const pingMs = performance.now() - t0;
      assert.equal(ping?.op, Op.ping);
      assert.ok(pingMs >= 150, `pinged after ${pingMs.toFixed(0)} ms`);
      const close = await quiet.readClose(1500);
      const closeMs = performance.now() - t0;
      assert.equal(close?.code, 1001);
      assert.match(close!.reason, /no traffic for \d+ ms/);
      assert.ok(closeMs >= 350, `closed after ${closeMs.toFixed(0)} ms`);
      assert.equal(await keep, null, "the connection that answered pings got nothing but pings");
      assert.equal(e.conns[1].isOpen, true);
    } finally {
      quiet.close();
      alive.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): frames sent in one turn leave in one write; bufferedAmount; a server close reaches the client`, async () => {
    await using e = startEcho({ sockets });
    const c = await client(e.url);
    await waitFor("the server side", () => e.conns.length === 1);
    const conn = e.conns[0];
    const writes = conn.stats.writes;
    for (let i = 0; i < 50; i++) conn.send(new Uint8Array([i]));
    conn.sendParts([new Uint8Array([1, 2]), new Uint8Array([3])]);
    assert.ok(conn.bufferedAmount >= 51 * 3, `bufferedAmount ${conn.bufferedAmount}`);
    await waitFor("51 messages", () => c.got.length === 51);
    assert.equal(conn.stats.writes - writes, 1, "one socket write");
    assert.equal(conn.bufferedAmount, 0);
    assert.deepEqual(c.got[50], new Uint8Array([1, 2, 3]));

    const t0 = performance.now();
    conn.close(4321, "done here");
    assert.equal(conn.state, "closing");
    conn.send(new Uint8Array([9])); // dropped: the connection is closing
    const ev = await within("the client's close event", c.closed);
    assert.deepEqual([ev.code, ev.reason], [4321, "done here"]);
    assert.deepEqual(await within("the server side's end", conn.closed), { code: 4321, reason: "done here" });
    assert.ok(performance.now() - t0 < 800, "ended once the client answered, not after the wait");
    assert.equal(conn.state, "closed");
    assert.equal(c.got.length, 51);
  });

  Deno.test(`ws (${sockets} sockets): a peer that never answers a close is cut off after about a second; server.close ends the rest`, async () => {
    const e = startEcho({ sockets });
    const mute = await RawClient.upgrade(e.port);
    const other = await RawClient.upgrade(e.port);
    try {
      await waitFor("both server sides", () => e.conns.length === 2);
      const t0 = performance.now();
      e.conns[0].close(1000, "bye");
      assert.deepEqual(await mute.readClose(), { code: 1000, reason: "bye" });
      assert.ok(await mute.ended(3000));
      const ms = performance.now() - t0;
      assert.ok(ms >= 900 && ms < 2000, `cut off after ${ms.toFixed(0)} ms`);

      const closing = e.server.close();
      assert.deepEqual(await other.readClose(), { code: 1001, reason: "server shutting down" });
      await other.send(Op.close, new Uint8Array([0x03, 0xe9]));
      await closing;
      assert.equal(e.server.connections, 0);
      assert.ok(await other.ended());
      await assert.rejects(RawClient.open(e.port), "no longer listening");
    } finally {
      mute.close();
      other.close();
      await e.server.close();
    }
  });
}
