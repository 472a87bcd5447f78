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
import { clientFrame, RawClient } from "../helpers/ws_frames.ts";
import { waitFor, within } from "../../testing/wait.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** An echo server on a free loopback port; `streamBytes` > 0 also sends that many bytes to every connection each 10 ms. */
interface Echo extends AsyncDisposable {
  server: WsServer;
  port: number;
  conns: WsConn[];
  closes: Map<WsConn, WsCloseInfo>;
}

function startEcho(opts: Partial<WsServerOptions> = {}, streamBytes = 0): Echo {
  const conns: WsConn[] = [];
  const closes = new Map<WsConn, WsCloseInfo>();
  const server = serveWebSocket({
    hostname: "127.0.0.1",
    port: 0,
    onConnection: (c) => {
      conns.push(c);
      c.onMessage = (data, binary) => binary ? c.send(data) : c.sendText(dec.decode(data));
      c.onClose = (code, reason) => closes.set(c, { code, reason });
    },
    ...opts,
  });
  const chunk = new Uint8Array(streamBytes);
  const stream = streamBytes > 0
    ? setInterval(() => {
      for (const c of conns) c.send(chunk);
    }, 10)
    : undefined;
  return {
    server,
    port: server.port,
    conns,
    closes,
    [Symbol.asyncDispose]: () => {
      clearInterval(stream);
      return server.close();
    },
  };
}

/** `count` masked pings with `payload` each, in one buffer. */
function pings(count: number, payload: Uint8Array): Uint8Array {
  const one = clientFrame(Op.ping, payload).length;
  const out = new Uint8Array(one * count);
  for (let i = 0; i < count; i++) out.set(clientFrame(Op.ping, payload), i * one);
  return out;
}

/** Writes `batch` until `total` bytes were sent or the write fails (the server dropped the connection). */
async function flood(c: RawClient, batch: Uint8Array, total: number): Promise<number> {
  let sent = 0;
  try {
    while (sent < total) {
      await c.write(batch);
      sent += batch.length;
    }
  } catch {
    // dropped by the server
  }
  return sent;
}

/** Another client, connected, doing echo round trips through Deno's WebSocket client until `stop` is called. */
async function otherClient(port: number): Promise<{ stop: () => Promise<{ count: number; worstMs: number }> }> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  ws.binaryType = "arraybuffer";
  let waiting: ((text: string) => void) | null = null;
  ws.onmessage = (ev) => {
    if (typeof ev.data === "string") waiting?.(ev.data);
  };
  await new Promise((res, rej) => {
    ws.onopen = res;
    ws.onerror = () => rej(new Error(`could not connect to port ${port}`));
  });
  let stopped = false, count = 0, worstMs = 0;
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now();
      const text = `round trip ${count}`;
      const got = await within(
        `echo of "${text}"`,
        new Promise<string>((r) => {
          waiting = r;
          ws.send(text);
        }),
        2000,
      );
      assert.equal(got, text);
      worstMs = Math.max(worstMs, performance.now() - t0);
      count++;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      try {
        await loop;
      } finally {
        const closed = new Promise((r) => ws.onclose = r);
        ws.close();
        await closed;
      }
      return { count, worstMs };
    },
  };
}

// Every test runs on both kinds of socket (core/net).
for (const sockets of SOCKET_KINDS) {
  Deno.test(`ws backpressure (${sockets} sockets): 16 MiB of pings from a peer that never reads leave at most two pongs waiting; others are served`, async () => {
    await using e = startEcho({ sockets });
    const flooder = await RawClient.upgrade(e.port);
    try {
      await waitFor("the server side", () => e.conns.length === 1);
      const conn = e.conns[0];
      let peak = 0;
      const sample = setInterval(() => peak = Math.max(peak, conn.bufferedAmount), 1);
      const other = await otherClient(e.port);
      const total = 16 * 1024 * 1024;
      const batch = pings(512, new Uint8Array(125).fill(7));
      const sent = await flood(flooder, batch, total);
      await waitFor("every ping read", () => conn.stats.bytesIn >= sent, 5000);
      clearInterval(sample);
      const { count, worstMs } = await other.stop();

      assert.equal(sent, Math.ceil(total / batch.length) * batch.length, "the server read the whole flood");
      assert.equal(conn.stats.pingsIn, sent / (batch.length / 512));
      // Each pong frame is 127 bytes: one being written and the latest one waiting at most.
      assert.ok(peak <= 2 * 127, `up to ${peak} bytes waited to be written`);
      assert.ok(conn.bufferedAmount <= 2 * 127, `${conn.bufferedAmount} bytes wait at the end`);
      assert.ok(
        conn.stats.pongsOut < conn.stats.pingsIn / 10,
        `${conn.stats.pongsOut} pongs for ${conn.stats.pingsIn} pings`,
      );
      // Deno's sockets write in a loop of their own, and reading waits while a pong waits behind its write. Epoll
      // sockets write a pong at once, while the socket has room (and these pongs fit, below).
      if (sockets === "deno") assert.ok(conn.stats.readPauses > 0, "reading waited for pongs to be written");
      assert.ok(count >= 1 && worstMs < 1000, `${count} round trips of another client, the slowest ${worstMs} ms`);
      // The loopback socket's buffers take these few pongs: the writes never stalled, so the peer is not dropped.
      assert.equal(conn.isOpen, true);
    } finally {
      flooder.close();
    }
  });

  Deno.test(`ws backpressure (${sockets} sockets): a ping flood from a peer that reads is answered, each pong with the latest payload so far`, async () => {
    await using e = startEcho({ sockets });
    const r = await RawClient.upgrade(e.port);
    try {
      const n = 3000;
      const frames = [];
      for (let i = 1; i <= n; i++) frames.push(clientFrame(Op.ping, enc.encode(String(i))));
      const all = new Uint8Array(frames.reduce((s, f) => s + f.length, 0));
      let at = 0;
      for (const f of frames) {
        all.set(f, at);
        at += f.length;
      }
      await r.write(all);
      const got: number[] = [];
      while (got.at(-1) !== n) {
        const f = await r.readFrame();
        assert.ok(f, `the connection ended after ${got.length} pongs`);
        assert.equal(f.op, Op.pong, `frame ${f.op}`);
        got.push(Number(dec.decode(f.payload)));
      }
      await r.send(Op.binary, "after");
      const echo = await r.readFrame();
      assert.deepEqual([echo?.op, dec.decode(echo!.payload)], [Op.binary, "after"], "no pong after the last");
      const conn = e.conns[0];
      assert.equal(conn.stats.pingsIn, n);
      assert.equal(conn.stats.pongsOut, got.length);
      assert.ok(got.length < n / 10, `${got.length} pongs for ${n} pings`);
      for (let i = 0; i < got.length; i++) {
        assert.ok(Number.isInteger(got[i]) && got[i] >= 1 && got[i] <= n, `pong ${i} answers a ping sent: ${got[i]}`);
        if (i > 0) assert.ok(got[i] > got[i - 1], `pong ${i} carries a later payload: ${got[i - 1]} then ${got[i]}`);
      }
    } finally {
      r.close();
    }
  });

  Deno.test(`ws backpressure (${sockets} sockets): a peer that never reads what it is sent stops being read and is dropped after writeStallMs`, async () => {
    const stallMs = 400;
    // 64 KiB each 10 ms fills the loopback socket's buffers (about 4 MiB) in well under a second.
    await using e = startEcho(
      { sockets, highWaterBytes: 256 * 1024, writeStallMs: stallMs },
      64 * 1024,
    );
    const flooder = await RawClient.upgrade(e.port);
    try {
      await waitFor("the server side", () => e.conns.length === 1);
      const conn = e.conns[0];
      // Sampled: when bytesIn last changed (a missed change only makes the quiet time look shorter) and whether
      // reading was paused at the last sample before the drop.
      let peak = 0, lastIn = -1, lastInAt = 0, pausedAtEnd = false;
      const sample = setInterval(() => {
        if (conn.state === "closed") return;
        peak = Math.max(peak, conn.bufferedAmount);
        pausedAtEnd = conn.readPaused;
        if (conn.stats.bytesIn !== lastIn) {
          lastIn = conn.stats.bytesIn;
          lastInAt = performance.now();
        }
      }, 2);
      const other = await otherClient(e.port);
      const t0 = performance.now();
      // Until the server drops it; the bound only keeps a broken server from making this endless.
      const flooding = flood(flooder, pings(512, new Uint8Array(125)), 256 * 1024 * 1024);
      const closed = await within("the flooder's drop", conn.closed, 5000);
      const closedAt = performance.now();
      const ms = closedAt - t0;
      const quietMs = closedAt - lastInAt;
      clearInterval(sample);
      const { count, worstMs } = await other.stop();
      const sent = await flooding;

      const seen = `dropped ${ms.toFixed(0)} ms after the flood began, nothing read for ${quietMs.toFixed(0)} ms ` +
        `before, up to ${peak} bytes waited`;
      assert.equal(closed.code, 1008, seen);
      assert.match(closed.reason, /^the peer read none of \d+ bytes waiting for \d+ ms$/);
      assert.deepEqual(e.closes.get(conn), closed);
      assert.ok(ms < 3000, seen);
      // The flooder kept sending all along: the server stopped reading it for the last writeStallMs.
      assert.ok(pausedAtEnd, `reading was paused before the drop; ${seen}`);
      assert.ok(quietMs >= stallMs * 0.8, seen);
      // What the server sends in a few times writeStallMs, far below the default maxBuffered of 16 MiB.
      assert.ok(peak < 8 * 1024 * 1024, seen);
      assert.ok(sent < 256 * 1024 * 1024, "the flood ended when the server dropped the flooder");
      assert.ok(count >= 3 && worstMs < 1000, `${count} round trips of another client, the slowest ${worstMs} ms`);
    } finally {
      flooder.close();
    }
  });

  Deno.test(`ws backpressure (${sockets} sockets): a connection whose waiting bytes pass maxBuffered is dropped with 1008 at once`, async () => {
    await using e = startEcho({ sockets, maxBuffered: 1024 * 1024, writeStallMs: 60_000 });
    const mute = await RawClient.upgrade(e.port);
    try {
      await waitFor("the server side", () => e.conns.length === 1);
      const conn = e.conns[0];
      const chunk = new Uint8Array(64 * 1024);
      // Past the socket's buffers (about 4 MiB on loopback) the bytes wait in the connection until the limit.
      let sent = 0;
      while (conn.isOpen && sent < 64 * 1024 * 1024) {
        conn.send(chunk);
        sent += chunk.length;
        await new Promise((r) => setTimeout(r, 0));
      }
      assert.equal(conn.isOpen, false, `still open after ${sent} bytes`);
      assert.ok(conn.bufferedAmount <= 1024 * 1024 + chunk.length + 14, `${conn.bufferedAmount} bytes waiting`);
      const closed = await within("the drop", conn.closed, 1000);
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, /^\d+ bytes waiting to be written, over the limit of 1048576$/);
    } finally {
      mute.close();
    }
  });

  Deno.test(`ws (${sockets} sockets): a 64-bit length with its most significant bit set closes with 1002, not 1009`, async () => {
    await using e = startEcho({ sockets });
    const r = await RawClient.upgrade(e.port);
    try {
      await r.write(new Uint8Array([0x82, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 9, 9, 9, 9, 9]));
      assert.deepEqual(await r.readClose(), {
        code: 1002,
        reason: "64-bit payload length with its most significant bit set",
      });
      assert.ok(await r.ended(), "then the server ends the connection");
    } finally {
      r.close();
    }
    await waitFor("the server's onClose", () => e.closes.size === 1);
    assert.equal([...e.closes.values()][0].code, 1002);
  });
}
