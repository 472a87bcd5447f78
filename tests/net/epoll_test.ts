/**
 * The epoll sockets (core/net) against Deno's own as the other end: bytes arrive whole and in order through short
 * reads and writes that wait for room, the end of a stream and a reset come through as Deno's do, closing fails what
 * waits, and where epoll cannot serve a hostname the listener is Deno's.
 */
import assert from "node:assert/strict";
import { listenTcp, type TcpConnection, type TcpListener } from "../../core/net/mod.ts";
import { within } from "../../testing/wait.ts";

const linux = Deno.build.os === "linux";
if (!linux) console.log("epoll_test: skipped: epoll sockets run on Linux only");

/** Bytes 0..n-1 of a pattern that catches reordering, loss and duplication. */
function pattern(n: number, seed: number): Uint8Array {
  const a = new Uint8Array(n);
  for (let i = 0; i < n; i++) a[i] = (i * 31 + seed + (i >> 13)) & 0xff;
  return a;
}

async function writeAll(c: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await c.write(bytes.subarray(off));
}

/** Reads until the end of the stream; every read gets at most `chunk` bytes. */
async function readAll(c: { read(p: Uint8Array): Promise<number | null> }, chunk: number): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const buf = new Uint8Array(chunk);
  for (;;) {
    const n = await c.read(buf);
    if (n === null) break;
    parts.push(buf.slice(0, n));
  }
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let off = 0;
  for (const p of parts) (out.set(p, off), off += p.length);
  return out;
}

/** An epoll listener on a free loopback port with one connection from Deno's client. */
async function pair(): Promise<{ l: TcpListener; server: TcpConnection; client: Deno.TcpConn } & AsyncDisposable> {
  const l = listenTcp("127.0.0.1", 0, "epoll");
  assert.equal(l.kind, "epoll");
  const [client, server] = await Promise.all([Deno.connect({ hostname: "127.0.0.1", port: l.addr.port }), l.accept()]);
  return {
    l,
    server,
    client,
    async [Symbol.asyncDispose]() {
      for (const c of [server, client, l]) {
        try {
          c.close();
        } catch {
          // closed by the test
        }
      }
      await l.finish();
    },
  };
}

Deno.test({
  name: "epoll sockets: 32 MiB to a peer that reads late, and 8 MiB back, arrive whole; each end is read as null",
  ignore: !linux,
  async fn() {
    await using p = await pair();
    assert.equal(p.server.remoteAddr.hostname, "127.0.0.1");
    assert.equal(p.server.remoteAddr.port, (p.client.localAddr as Deno.NetAddr).port);
    p.server.setNoDelay(true);

    // More than the socket buffers of both ends hold: the write has to wait for room until the client reads.
    const down = pattern(32 << 20, 1);
    let wrote = false;
    const writing = writeAll(p.server, down).then(() => wrote = true).then(() => p.server.closeWrite());
    // Time to finish, if it could without the client reading.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(wrote, false, "32 MiB fitted in the socket buffers: the test proves nothing about waiting");
    const got = await within("the client reading 32 MiB", readAll(p.client, 100_000), 20_000);
    await writing;
    assert.equal(got.length, down.length);
    assert.ok(got.every((b, i) => b === down[i]), "the bytes arrived changed or out of order");

    const up = pattern(8 << 20, 7);
    const sending = writeAll(p.client, up).then(() => p.client.closeWrite());
    // Small reads: most come back short of nothing, some exactly full, and the end after them.
    const back = await within("the server reading 8 MiB", readAll(p.server, 4093), 20_000);
    await sending;
    assert.equal(back.length, up.length);
    assert.ok(back.every((b, i) => b === up[i]), "the bytes arrived changed or out of order");
    assert.equal(await p.server.read(new Uint8Array(16)), null, "a read after the end is the end again");
  },
});

Deno.test({
  name: "epoll sockets: close fails a waiting read; a second close, reads, writes and accepts after close fail",
  ignore: !linux,
  async fn() {
    await using p = await pair();
    const reading = p.server.read(new Uint8Array(64));
    await assert.rejects(p.server.read(new Uint8Array(64)), Deno.errors.Busy);
    p.server.close();
    await assert.rejects(reading, Deno.errors.BadResource);
    assert.throws(() => p.server.close(), Deno.errors.BadResource);
    await assert.rejects(p.server.read(new Uint8Array(8)), Deno.errors.BadResource);
    await assert.rejects(p.server.write(new Uint8Array(8)), Deno.errors.BadResource);
    // The client sees the end.
    assert.equal(await within("the client seeing the end", p.client.read(new Uint8Array(8)), 3000), null);

    const accepting = p.l.accept();
    p.l.close();
    await assert.rejects(accepting, Deno.errors.BadResource);
    await assert.rejects(p.l.accept(), Deno.errors.BadResource);
  },
});

Deno.test({
  name: "epoll sockets: a peer that resets the connection fails the server's writes with Deno's error",
  ignore: !linux,
  async fn() {
    await using p = await pair();
    // Closing with unread bytes makes the client's kernel answer with a reset (on loopback a write has reached the
    // peer's buffer when it returns).
    await writeAll(p.server, pattern(1000, 3));
    p.client.close();
    const err = await within(
      "a write failing",
      (async () => {
        for (;;) await p.server.write(pattern(64 * 1024, 5));
      })().catch((e) => e),
      5000,
    );
    assert.ok(
      err instanceof Deno.errors.ConnectionReset || err instanceof Deno.errors.BrokenPipe,
      `not Deno's reset error: ${err}`,
    );
  },
});

Deno.test({
  name: "epoll sockets: a port in use fails with AddrInUse; an IPv6 hostname gets Deno's sockets",
  ignore: !linux,
  async fn() {
    const l = listenTcp("127.0.0.1", 0, "epoll");
    try {
      assert.throws(() => listenTcp("127.0.0.1", l.addr.port, "epoll"), Deno.errors.AddrInUse);
    } finally {
      l.close();
      await l.finish();
    }
    let v6: TcpListener | null = null;
    try {
      v6 = listenTcp("::1", 0, "epoll");
    } catch (e) {
      // No IPv6 loopback on this host: Deno's listener failed as it would have without epoll.
      assert.ok(e instanceof Deno.errors.AddrNotAvailable, String(e));
      return;
    }
    try {
      assert.equal(v6.kind, "deno");
    } finally {
      v6.close();
      await v6.finish();
    }
    const plain = listenTcp("127.0.0.1", 0, "deno");
    assert.equal(plain.kind, "deno");
    plain.close();
  },
});
