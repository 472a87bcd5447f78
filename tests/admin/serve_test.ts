/**
 * The admin HTTP server's connection limits, in process with small limits:
 * the cap on open connections, the body deadline, and close() with requests
 * in flight. (The header timeout is tried on a real cellappmgr in attacks_test.ts.)
 */
import assert from "node:assert/strict";
import { type AdminServer, serveAdmin, type ServeOptions } from "../../admin/mod.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const encode = (s: string) => new TextEncoder().encode(s);
const HEAD = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

async function start(
  fetch: (req: Request) => Response | Promise<Response>,
  o: Partial<ServeOptions> = {},
): Promise<AdminServer> {
  return await serveAdmin(fetch, { hostname: "127.0.0.1", port: 0, headerTimeoutMs: 10_000, ...o });
}

/** Resolves when the server closes `c` (end of stream or reset), with what it sent before. */
async function serverCloses(c: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let got = "";
  try {
    for (let n; (n = await c.read(buf)) !== null;) got += new TextDecoder().decode(buf.subarray(0, n));
  } catch {
    // reset by the server: closed too
  }
  return got;
}

/** Sends one request on `c` and reads its (small) answer. */
async function roundTrip(c: Deno.Conn, request = HEAD): Promise<string> {
  await c.write(encode(request));
  const buf = new Uint8Array(4096);
  const n = await within("an answer", c.read(buf), 2000);
  return new TextDecoder().decode(buf.subarray(0, n ?? 0));
}

function closeAll(conns: Deno.Conn[]): void {
  for (const c of conns) {
    try {
      c.close();
    } catch {
      // already closed
    }
  }
}

Deno.test("connections past the cap are closed on arrival; those inside it are served", opts, async () => {
  const server = await start(() => new Response("ok"), { maxConnections: 20 });
  const addr = { hostname: "127.0.0.1", port: server.port };
  const held: Deno.Conn[] = [];
  const extra: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 20; i++) held.push(await Deno.connect(addr));
    await waitFor("20 open connections", () => server.connections === 20);
    for (let i = 0; i < 5; i++) extra.push(await Deno.connect(addr));
    const said = await within("the 5 connections past the cap are closed", Promise.all(extra.map(serverCloses)), 2000);
    assert.deepEqual(said, ["", "", "", "", ""], "closed without an answer");
    assert.equal(server.refused, 5);
    assert.equal(server.connections, 20);
    assert.match(await roundTrip(held[0]), /^HTTP\/1\.1 200/);

    held.pop()!.close();
    await waitFor("a slot to free up", () => server.connections === 19);
    const next = await Deno.connect(addr);
    held.push(next);
    assert.match(await roundTrip(next), /^HTTP\/1\.1 200/);
    assert.equal(server.refused, 5);
  } finally {
    closeAll([...held, ...extra]);
    await server.close();
  }
});

Deno.test("an answer sent before the body is in ends the connection without resetting it", opts, async () => {
  const server = await start(async (req) => {
    if (new URL(req.url).pathname === "/read") return new Response(`got ${(await req.arrayBuffer()).byteLength}`);
    return new Response("too large", { status: 413 });
  });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    for (let i = 0; i < 3; i++) {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (sent >= 32 * 1024 * 1024) return c.close();
          sent += 64 * 1024;
          c.enqueue(new Uint8Array(64 * 1024));
        },
      });
      // A reset here would reach fetch as "broken pipe" instead of the answer.
      const res = await fetch(`${base}/refuse`, { method: "POST", body });
      assert.equal(res.status, 413);
      assert.equal(res.headers.get("connection"), "close");
      assert.equal(await res.text(), "too large");
      const ok = await fetch(`${base}/read`, { method: "POST", body: "abc" });
      assert.equal(await ok.text(), "got 3", "the next request is not sent on the ended connection");
      assert.notEqual(ok.headers.get("connection"), "close", "a request read whole keeps its connection");
    }
  } finally {
    await server.close();
  }
});

Deno.test("a body that stops arriving is cut off; a slow handler with its body in is not", opts, async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const server = await start(async (req) => {
    const body = await req.text();
    if (new URL(req.url).pathname === "/slow") await gate;
    return new Response(`got ${body.length}`);
  }, { bodyTimeoutMs: 300 });
  const addr = { hostname: "127.0.0.1", port: server.port };
  const conns: Deno.Conn[] = [];
  try {
    const stalled = await Deno.connect(addr);
    conns.push(stalled);
    const t0 = performance.now();
    await stalled.write(encode("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n0123456789"));
    await within("the stalled body's connection is closed", serverCloses(stalled), 2000);
    const ms = performance.now() - t0;
    assert.ok(ms >= 250, `closed after ${ms.toFixed(0)} ms, before the body deadline`);
    assert.equal(server.timedOut, 1);

    const slow = await Deno.connect(addr);
    conns.push(slow);
    const t1 = performance.now();
    const answer = roundTrip(slow, "POST /slow HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc");
    // Twice the body deadline with the handler still running: the connection must survive it.
    await waitFor("the body deadline to pass", () => performance.now() - t1 > 600, 2000);
    release();
    assert.match(await answer, /^HTTP\/1\.1 200[\s\S]*got 3$/);
    assert.equal(server.timedOut, 1);
  } finally {
    release();
    closeAll(conns);
    await server.close();
  }
});

Deno.test("close() lets a request in flight finish, closes idle connections and refuses new ones", opts, async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const server = await start(async () => {
    entered();
    await gate;
    return new Response("done");
  });
  const addr = { hostname: "127.0.0.1", port: server.port };
  const idle = await Deno.connect(addr);
  try {
    await waitFor("the idle connection", () => server.connections === 1);
    const pending = fetch(`http://127.0.0.1:${server.port}/`);
    await inHandler;
    const closing = server.close();
    await within("the idle connection is closed", serverCloses(idle), 1000);
    await assert.rejects(async () => {
      const c = await Deno.connect(addr);
      // Some systems accept before the listener's close lands; then it must be closed at once.
      const said = await within("a late connection is closed", serverCloses(c), 1000);
      c.close();
      throw new Error(`connected after close(), and got ${JSON.stringify(said)}`);
    }, (e: Error) => e instanceof Deno.errors.ConnectionRefused || /got ""/.test(e.message));
    release();
    const res = await pending;
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "done");
    await within("close() resolves once the request is answered", closing, 2000);
    assert.equal(server.connections, 0);
  } finally {
    release();
    closeAll([idle]);
  }
});

Deno.test("close() cuts off a request that outlasts the grace period", opts, async () => {
  let entered!: () => void;
  const inHandler = new Promise<void>((r) => (entered = r));
  const server = await start(() => {
    entered();
    return new Promise<Response>(() => {});
  }, { closeGraceMs: 200 });
  const pending = fetch(`http://127.0.0.1:${server.port}/`).then((r) => r.status, (e: Error) => e.name);
  await inHandler;
  const t0 = performance.now();
  await within("close() gives up on the hung request", server.close(), 2000);
  assert.ok(performance.now() - t0 >= 150);
  assert.equal(await pending, "TypeError", "the hung request's connection was cut");
});
