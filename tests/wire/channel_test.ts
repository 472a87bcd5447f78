import assert from "node:assert/strict";
import {
  type Channel,
  ChannelClosedError,
  type ChannelOptions,
  dial,
  FrameWriter,
  Handlers,
  message,
  RemoteError,
  RequestTimeoutError,
  tick,
  WireServer,
} from "../../core/wire/mod.ts";
import { check } from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

const { int, str, tuple } = check;

// Test-only messages, in a kind range the product catalog leaves free.
const tool = ["tool"] as const;
const Echo = message<[string], string>(1000, "test.echo", tuple(str(1 << 20)), tool);
const Add = message<[number, number], number>(
  1001,
  "test.add",
  tuple(int(), int()),
  tool,
);
const Note = message<[number]>(1002, "test.note", tuple(int()), tool);
const Never = message<[], void>(1003, "test.never", tuple(), tool);
const Unserved = message<[]>(1004, "test.unserved", tuple(), tool);

const opts = (extra: Partial<ChannelOptions> = {}): ChannelOptions => ({
  role: "tool",
  ...extra,
});

function serve(extra: Partial<ChannelOptions> = {}) {
  const log = memoryLogger();
  const notes: number[] = [];
  const handlers = new Handlers()
    .on(Echo, (_ch, s) => s)
    .on(Add, (_ch, a, b) => {
      if (a < 0) throw new Error("negative numbers are not welcome");
      return a + b;
    })
    .on(Note, (_ch, n) => void notes.push(n))
    .on(Never, () => new Promise<void>(() => {}));
  const accepted: Channel[] = [];
  const server = new WireServer({
    host: "127.0.0.1",
    port: 0,
    role: "cellappmgr",
    handlers,
    log,
    onChannel: (ch) => accepted.push(ch),
    ...extra,
  });
  return {
    server,
    log,
    notes,
    accepted,
    [Symbol.dispose]: () => server.close(),
  };
}

/** Opens a raw socket, reads the server's challenge and returns the socket. */
async function rawAfterChallenge(port: number): Promise<Deno.TcpConn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const buf = new Uint8Array(256);
  const n = await conn.read(buf);
  assert.ok(n && n > 4, "the server speaks first with a challenge");
  return conn;
}

/** Resolves once the server has closed `conn` (read returns EOF or fails). */
async function closedByServer(conn: Deno.TcpConn): Promise<void> {
  const buf = new Uint8Array(4096);
  try {
    while ((await conn.read(buf)) !== null) { /* drain the bye */ }
  } catch {
    // reset by peer also means closed
  }
  conn.close();
}

Deno.test("request/reply, one-way messages and error replies", async () => {
  using s = serve();
  const ch = await dial(s.server.address, opts());
  try {
    assert.equal(ch.peer.role, "cellappmgr");
    assert.equal(await ch.request(Echo, "hi"), "hi");
    assert.equal(await ch.request(Add, 2, 3), 5);
    await assert.rejects(
      ch.request(Add, -1, 3),
      (e) => e instanceof RemoteError && /not welcome/.test(e.message),
    );
    for (let i = 0; i < 5; i++) ch.send(Note, i);
    await waitFor("notes", () => s.notes.length === 5);
    assert.deepEqual(s.notes, [0, 1, 2, 3, 4]);
    // A peer that sends nonsense is dropped, with a line naming it: nothing it says next can be trusted.
    await assert.rejects(ch.request(Add, 1.5 as number, 2), ChannelClosedError);
    assert.match(await ch.closed, /bad test.add: argument 0: expected an integer/);
    await s.log.waitFor(/\[tool pid \d+ [^\]]*\] disconnecting: bad test.add/);
    const again = await dial(s.server.address, opts());
    assert.equal(await again.request(Echo, "others fine"), "others fine");
    again.close("test over");
  } finally {
    ch.close("test over");
  }
});

Deno.test("a message from a role its definition does not name disconnects the peer", async () => {
  using s = serve();
  const base = await dial(s.server.address, opts({ role: "baseapp" }));
  base.send(Note, 1);
  assert.match(await base.closed, /unexpected message test.note \(kind 1002\) from a baseapp/);
  assert.deepEqual(s.notes, []);
});

Deno.test("accepted and expected roles: a listener refuses roles it does not serve, a dialler checks whom it reached", async () => {
  using s = serve({ acceptRoles: ["cellapp"] });
  await assert.rejects(dial(s.server.address, opts()), /accepts connections from cellapp, not a tool/);
  using t = serve();
  await assert.rejects(
    dial(t.server.address, opts({ expectRoles: ["baseapp"] })),
    /expected a baseapp at .*, found a cellappmgr/,
  );
});

Deno.test("before the handshake only a small frame is read; after it the configured limit holds", async () => {
  using s = serve({ maxFrame: 1 << 20 });
  const raw = await rawAfterChallenge(s.server.port);
  const header = new Uint8Array(4);
  new DataView(header.buffer).setUint32(0, 5000);
  await raw.write(header);
  await closedByServer(raw);
  await s.log.waitFor(/frame of 5000 bytes exceeds the limit of 4096/);
  const ch = await dial(s.server.address, opts({ maxFrame: 1 << 20 }));
  assert.equal((await ch.request(Echo, "x".repeat(100_000))).length, 100_000);
  ch.close("test over");
});

Deno.test("a request without a reply rejects after its timeout", async () => {
  using s = serve();
  const ch = await dial(s.server.address, opts());
  try {
    const t0 = performance.now();
    await assert.rejects(ch.requestWithin(150, Never), RequestTimeoutError);
    assert.ok(performance.now() - t0 >= 140);
  } finally {
    ch.close("test over");
  }
});

Deno.test("pending requests reject when the channel closes", async () => {
  using s = serve();
  const ch = await dial(s.server.address, opts());
  const p = ch.request(Never);
  ch.close("closing on purpose");
  await assert.rejects(p, ChannelClosedError);
  assert.equal(await ch.closed, "closing on purpose");
});

Deno.test("writes during a tick leave in one write; past the threshold sooner", async () => {
  using s = serve();
  const ch = await dial(s.server.address, opts({ flushThreshold: 4096 }));
  try {
    await ch.request(Echo, "warm up");
    const before = ch.stats.writes;
    tick(() => {
      for (let i = 0; i < 100; i++) ch.send(Note, i);
      assert.equal(
        ch.stats.writes,
        before,
        "nothing is written inside the tick",
      );
    });
    await waitFor("the bundle to arrive", () => s.notes.length === 100);
    assert.equal(ch.stats.writes - before, 1, "one bundle, one write");
    const big = "x".repeat(1000);
    tick(() => {
      for (let i = 0; i < 20; i++) ch.send(Note, i);
      for (let i = 0; i < 20; i++) ch.send(Echo, big);
      assert.ok(
        ch.buffered < 20 * 1000,
        `past the threshold bytes leave before the tick ends (${ch.buffered} held)`,
      );
    });
  } finally {
    ch.close("test over");
  }
});

Deno.test("a channel whose beats carry nothing beats only while it sends nothing else", async () => {
  using s = serve({ heartbeatMs: 60_000, deadAfterMs: 120_000 });
  const ch = await dial(s.server.address, opts({ heartbeatMs: 40, deadAfterMs: 120_000 }));
  try {
    await waitFor("the server's side of the channel", () => s.accepted[0]);
    // Sending every 10 ms, it never goes a beat's time without a frame: no heartbeat goes.
    let n = 0;
    const busy = setInterval(() => ch.send(Note, n++), 10);
    try {
      await waitFor("40 notes", () => s.notes.length >= 40);
    } finally {
      clearInterval(busy);
    }
    assert.equal(s.accepted[0].lastHeartbeat, undefined, "no heartbeat while other frames go");
    // Quiet again: its heartbeats resume (an empty payload, null).
    await waitFor("a heartbeat", () => s.accepted[0].lastHeartbeat === null);
  } finally {
    ch.close("test over");
  }
});

Deno.test("heartbeats carry a payload and a silent peer is dropped", async () => {
  using s = serve({ heartbeatMs: 50, deadAfterMs: 300 });
  const ch = await dial(
    s.server.address,
    opts({ heartbeatMs: 50, heartbeatPayload: () => ({ load: 0.25 }) }),
  );
  await waitFor("a heartbeat", () => s.accepted[0]?.lastHeartbeat);
  assert.deepEqual(s.accepted[0].lastHeartbeat, { load: 0.25 });
  ch.close("done");
  // A peer that stops sending heartbeats is closed by the other side.
  const quiet = await dial(
    s.server.address,
    opts({ heartbeatMs: 60_000, deadAfterMs: 120_000 }),
  );
  assert.match(await quiet.closed, /missed heartbeats/);
  await s.log.waitFor(/closed: no traffic for \d+ ms \(missed heartbeats\)/);
  // A raw peer that completes nothing is dropped by the handshake timeout.
  using t = serve({ handshakeTimeoutMs: 200 });
  const raw = await rawAfterChallenge(t.server.port);
  await closedByServer(raw);
  await t.log.waitFor(/no handshake within 200 ms/);
});

Deno.test("garbage bytes disconnect that peer only", async () => {
  using s = serve();
  const good = await dial(s.server.address, opts());
  try {
    const raw = await rawAfterChallenge(s.server.port);
    await raw.write(new Uint8Array([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]));
    await closedByServer(raw);
    await s.log.waitFor(/disconnecting: frame body/);
    assert.equal(await good.request(Echo, "unharmed"), "unharmed");
  } finally {
    good.close("test over");
  }
});

Deno.test("an oversized frame closes the channel", async () => {
  using s = serve({ maxFrame: 1024 });
  const raw = await rawAfterChallenge(s.server.port);
  await raw.write(new Uint8Array([0, 0x10, 0, 0])); // announces 1 MiB
  await closedByServer(raw);
  await s.log.waitFor(/frame of 1048576 bytes exceeds the limit of 1024/);
  // The sending side refuses to build such a frame in the first place.
  const ch = await dial(s.server.address, opts({ maxFrame: 1024 }));
  try {
    assert.throws(() => ch.send(Echo, "y".repeat(2000)), /exceeds the limit/);
    assert.equal(await ch.request(Echo, "small"), "small");
  } finally {
    ch.close("test over");
  }
});

Deno.test("an unknown or unserved kind disconnects the peer", async () => {
  using s = serve();
  const a = await dial(s.server.address, opts());
  // Reach past the typed API to send what a broken peer would.
  (a as unknown as { send(d: unknown, ...args: unknown[]): void }).send({
    kind: 999,
    name: "bogus",
  });
  assert.match(await a.closed, /unknown message kind 999/);
  await s.log.waitFor(/disconnecting: unknown message kind 999/);
  const b = await dial(s.server.address, opts());
  b.send(Unserved);
  assert.match(await b.closed, /unexpected message test.unserved/);
  const c = await dial(s.server.address, opts());
  assert.equal(await c.request(Echo, "others fine"), "others fine");
  c.close("test over");
});

Deno.test("a bad handshake is refused", async () => {
  using s = serve();
  const raw = await rawAfterChallenge(s.server.port);
  const w = new FrameWriter();
  w.push([2, 0, {
    role: "emperor",
    pid: 1,
    address: "x:1",
    version: PROTOCOL_VERSION,
    proof: null,
  }]);
  await raw.write(w.take());
  await closedByServer(raw);
  await s.log.waitFor(
    /refusing peer: bad handshake: hello argument 0: field "role"/,
  );
  const raw2 = await rawAfterChallenge(s.server.port);
  w.push([16, 0, {}]);
  await raw2.write(w.take());
  await closedByServer(raw2);
  await s.log.waitFor(/bad handshake: expected hello, got kind 16/);
});

Deno.test("a peer speaking another protocol version is refused at the handshake, naming both", async () => {
  using s = serve();
  const raw = await rawAfterChallenge(s.server.port);
  const w = new FrameWriter();
  w.push([2, 0, { role: "cellapp", pid: 1, address: "127.0.0.1:1", version: PROTOCOL_VERSION + 1, proof: null }]);
  await raw.write(w.take());
  await closedByServer(raw);
  await s.log.waitFor(
    new RegExp(`protocol version mismatch: peer speaks ${PROTOCOL_VERSION + 1}, this process ${PROTOCOL_VERSION}`),
  );
});

Deno.test("cluster secret: right one passes, wrong or missing one is refused", async () => {
  using s = serve({ secret: "s3cret" });
  const ok = await dial(s.server.address, opts({ secret: "s3cret" }));
  assert.equal(await ok.request(Echo, "in"), "in");
  ok.close("done");
  await assert.rejects(
    dial(s.server.address, opts({ secret: "guess" })),
    /wrong cluster secret/,
  );
  await assert.rejects(dial(s.server.address, opts()), /requires a secret/);
  await s.log.waitFor(/refusing peer: wrong cluster secret/);
  using open = serve();
  await assert.rejects(
    dial(open.server.address, opts({ secret: "x" })),
    /has no secret/,
  );
});
