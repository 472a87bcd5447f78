/**
 * The admin watch socket without a browser: tickets and the guards on the
 * upgrade, topics subscribed and unsubscribed, bad messages, the watcher cap,
 * a slow reader, and the cluster topic's events as processes are shut down,
 * killed and restarted.
 */
import assert from "node:assert/strict";
import type { SpaceView } from "../../core/views.ts";
import { api, freePort } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { RawClient } from "../helpers/ws_frames.ts";
import { ticket, WatchClient, type WatchCluster, watchCluster, type WatchMessage } from "../helpers/watch.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const text = new TextDecoder();

/** Sends an upgrade request for `path` on a raw connection; returns the connection and the answer's head. */
async function upgrade(c: WatchCluster, path: string, extra = ""): Promise<{ raw: RawClient; head: string }> {
  // A rebound page's Host is refused, as for REST.
  const raw = await RawClient.open(c.http.port);
  await raw.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${c.http.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
  );
  return { raw, head: await raw.readHead(5000) };
}

/** The status of an upgrade answer and its JSON error code (read to the end of the connection). */
async function refused(c: WatchCluster, path: string, extra = ""): Promise<{ status: number; code: string }> {
  const { raw, head } = await upgrade(c, path, extra);
  const body = await raw.readToEnd(5000);
  raw.conn.close();
  return { status: Number(head.split(" ")[1]), code: JSON.parse(body).error.code };
}

Deno.test("watch: a single-use ticket opens the socket; the token, Host and Origin guards apply", opts, async () => {
  await using c = await watchCluster();
  // The ticket is behind the bearer token.
  const bare = await api(c.admin, "/api/watch/ticket", {
    method: "POST",
    headers: { "content-type": "application/json" },
  });
  assert.equal(bare.status, 401);

  assert.deepEqual(await refused(c, "/api/watch"), { status: 401, code: "unauthorized" });
  assert.deepEqual(await refused(c, "/api/watch?ticket=made-up"), { status: 401, code: "unauthorized" });
  const t = await ticket(c);
  assert.deepEqual(await refused(c, `/api/watch?ticket=${t}`, "Origin: https://evil.example\r\n"), {
    status: 403,
    code: "forbidden_origin",
  });
  // Refused by the Origin guard, before the ticket is looked at: it still opens the socket, once.
  const rebound = await upgrade(c, `/api/watch?ticket=${t}`);
  assert.match(rebound.head, /^HTTP\/1\.1 101/);
  rebound.raw.conn.close();
  // Used once: never again.
  assert.deepEqual(await refused(c, `/api/watch?ticket=${t}`), { status: 401, code: "unauthorized" });
  // A rebound page's Host is refused, as for REST.
  const raw = await RawClient.open(c.http.port);
  await raw.write(
    `GET /api/watch?ticket=${await ticket(c)} HTTP/1.1\r\nHost: rebound.example\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  assert.match(await raw.readHead(5000), /^HTTP\/1\.1 403/);
  raw.conn.close();
  // A handshake without its key is answered, not crashed on.
  const keyless = await RawClient.open(c.http.port);
  await keyless.write(
    `GET /api/watch?ticket=${await ticket(c)} HTTP/1.1\r\nHost: 127.0.0.1:${c.http.port}\r\nUpgrade: websocket\r\n` +
      `Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  assert.match(await keyless.readHead(5000), /^HTTP\/1\.1 400/);
  keyless.conn.close();
  // A plain GET is told what the route is.
  const plain = await api(c.admin, "/api/watch", { headers: c.auth });
  assert.equal(plain.status, 426);
  // The page's own origin is fine.
  const same = await upgrade(c, `/api/watch?ticket=${await ticket(c)}`, `Origin: ${c.admin}\r\n`);
  assert.match(same.head, /^HTTP\/1\.1 101/);
  same.raw.conn.close();
});

Deno.test("watch: topics by message; a bad message is answered with an error and harms nothing", opts, async () => {
  await using c = await watchCluster({ npcs: 40 });
  const w = await WatchClient.open(c);
  await w.next("hello", (m) => m.op === "hello");

  for (
    const [bad, why] of [
      ["not json", /not JSON/],
      ["[1, 2]", /must be an object/],
      [JSON.stringify({ op: "dance", topic: "cluster" }), /op must be/],
      [JSON.stringify({ op: "subscribe", topic: "space:abc" }), /topic must be/],
      [JSON.stringify({ op: "subscribe", topic: "space:0" }), /topic must be/],
      [JSON.stringify({ op: "subscribe" }), /topic must be/],
      [JSON.stringify({ op: "subscribe", topic: "x".repeat(5000) }), /limited to 4096 bytes/],
      [JSON.stringify({ op: "subscribe", topic: "space:999" }), /no space 999/],
      [JSON.stringify({ op: "subscribe", topic: "entity:999999" }), /no entity 999999/],
    ] as const
  ) {
    w.send(bad);
    const e = await w.next(`an error for ${bad.slice(0, 40)}`, (m) => m.op === "error");
    assert.match(e.message, why);
  }
  w.ws.send(new Uint8Array([1, 2, 3]));
  assert.match((await w.next("an error for binary", (m) => m.op === "error")).message, /not binary/);
  assert.equal(c.hub.feeds.length, 0, "no feed was left open by the bad subscriptions");

  // The socket still works.
  w.send({ op: "subscribe", topic: "cluster" });
  await w.next("subscribed to cluster", (m) => m.op === "subscribed" && m.topic === "cluster");
  const procs = await w.next("the processes", (m) => m.topic === "cluster" && m.type === "processes");
  assert.deepEqual(procs.processes.map((p: WatchMessage) => p.role), ["cellappmgr", "cellapp"]);

  w.send({ op: "subscribe", topic: "space:1" });
  const geometry = await w.next("space 1's geometry", (m) => m.topic === "space:1" && m.type === "geometry");
  const rest = (await api(c.admin, "/api/spaces/1", { headers: c.auth })).body as SpaceView;
  assert.deepEqual(geometry.cells, rest.cells.map((x) => ({ id: x.id, cellapp: x.cellapp, rect: x.rect })));
  const entities = await w.next("space 1's entities", (m) => m.topic === "space:1" && m.type === "entities");
  const points = entities.cells.flatMap((x: WatchMessage) => x.points);
  assert.equal(points.length, 40);
  const load = await w.next("space 1's loads", (m) => m.topic === "space:1" && m.type === "load");
  assert.equal(load.cells[0].reals, 40);

  // An entity: its properties with their flags, and its position as it walks.
  const id = points[0][0];
  w.send({ op: "subscribe", topic: `entity:${id}` });
  const first = await w.next("the entity", (m) => m.topic === `entity:${id}` && m.type === "entity");
  assert.equal(first.entity.type, "NPC");
  assert.equal(first.entity.cellapp, 1);
  const radius = first.entity.properties.find((p: WatchMessage) => p.name === "wanderRadius");
  assert.deepEqual(radius, { name: "wanderRadius", flags: "CELL_PRIVATE", type: "FLOAT32", value: 10 });
  const moved = await w.next(
    "the entity to move",
    (m) =>
      m.topic === `entity:${id}` && m.type === "entity" && m.entity.position.join() !== first.entity.position.join(),
  );
  assert.equal(moved.entity.id, id);

  // Samples come at most 5 times a second.
  w.skip();
  const from = w.messages.length;
  await new Promise((r) => setTimeout(r, 2000));
  const samples = w.messages.slice(from).filter((m) => m.topic === "space:1" && m.type === "entities");
  assert.ok(samples.length >= 5 && samples.length <= 11, `${samples.length} entity samples in 2 s`);

  // Unsubscribed: nothing more of that topic, and its feed stops when nobody follows it.
  w.send({ op: "unsubscribe", topic: "space:1" });
  await w.next("unsubscribed", (m) => m.op === "unsubscribed" && m.topic === "space:1");
  const after = w.messages.length;
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(w.messages.slice(after).filter((m) => m.topic === "space:1").length, 0);
  assert.deepEqual(c.hub.feeds.sort(), ["cluster", `entity:${id}`]);
  await w.close();
  await waitFor("every feed to stop", () => c.hub.feeds.length === 0);
});

Deno.test("watch: the number of watchers is bounded and the one past it is told why", opts, async () => {
  await using c = await watchCluster({ watch: { maxWatchers: 2 } });
  const a = await WatchClient.open(c);
  const b = await WatchClient.open(c);
  const third = await WatchClient.open(c, { closing: true });
  const e = await third.next("a refusal", (m) => m.op === "error");
  assert.equal(e.code, "too_many_watchers");
  await waitFor("the third to be closed", () => third.closed);
  assert.equal(third.closed!.code, 1013);
  assert.match(third.closed!.reason, /2 watchers, its limit/);
  assert.equal(c.hub.watchers, 2);
  await a.close();
  await waitFor("a place to free up", () => c.hub.watchers === 1);
  const d = await WatchClient.open(c);
  await d.next("hello", (m) => m.op === "hello");
  await b.close();
  await d.close();
});

Deno.test("watch: a reader that does not read loses samples; its buffer stays bounded", opts, async () => {
  const bound = 64 * 1024;
  // Points for every entity (no counts per square), so that each sample is large: about 100 KB, 5 a second.
  await using c = await watchCluster({
    npcs: 5000,
    watch: { maxBufferedBytes: bound, denseCell: 1_000_000, slowCloseMs: 120_000 },
  });
  const { raw, head } = await upgrade(c, `/api/watch?ticket=${await ticket(c)}`);
  assert.match(head, /^HTTP\/1\.1 101/);
  await raw.send(1, JSON.stringify({ op: "subscribe", topic: "space:1" }));
  // It reads nothing: once the kernel's buffers are full, bytes wait in its socket, up to the bound.
  const stat = () => c.hub.stats()[0];
  await waitFor("samples to be dropped", () => stat()?.dropped > 0, 60_000, 100);
  let most = 0;
  const droppedBefore = stat().dropped;
  for (let i = 0; i < 20; i++) {
    most = Math.max(most, stat().bufferedAmount);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(stat().dropped > droppedBefore, "samples go on being dropped while it does not read");
  // The bound, overshot by at most the one message that crossed it.
  assert.ok(most <= bound + 256 * 1024, `${most} bytes waited in the slow watcher's socket`);
  console.log(`slow watcher: at most ${most} bytes waited in its socket; ${stat().dropped} messages dropped`);

  // Reading again, it catches up: the geometry it missed comes again, then samples.
  let geometryAgain = false;
  const deadline = Date.now() + 30_000;
  let sawDropped = false;
  while (!geometryAgain && Date.now() < deadline) {
    const f = await raw.readFrame(10_000);
    assert.ok(f, "the connection stays open");
    if (f.op === 9) await raw.send(10, f.payload);
    if (f.op !== 1) continue;
    const m = JSON.parse(text.decode(f.payload));
    if (m.type === "geometry") geometryAgain = sawDropped;
    // Frames written before the drops began come first; past them, it is caught up.
    if (m.type === "entities") sawDropped = true;
  }
  assert.ok(geometryAgain, "the geometry is sent again once it reads");
  raw.conn.close();
});

Deno.test(
  "watch: the cluster topic tells a shutdown, a kill and a restart; processes are shut down one by one",
  opts,
  async () => {
    await using c = await watchCluster({ cellapps: 2 });
    const w = await WatchClient.open(c);
    w.send({ op: "subscribe", topic: "cluster" });
    await w.next("the processes", (m) => m.type === "processes");
    const post = (path: string) => api(c.admin, path, { method: "POST", headers: c.auth });

    assert.equal((await post("/api/processes/99/shutdown")).status, 404);
    assert.equal((await post("/api/processes/1/shutdown?force=maybe")).status, 400);

    // Graceful: cellapp 2 retires (its cells go to cellapp 1), then stops and says goodbye.
    const graceful = await post("/api/processes/2/shutdown");
    assert.equal(graceful.status, 202, JSON.stringify(graceful.body));
    const left = await w.next(
      "cellapp 2 to leave",
      (m) => m.type === "event" && m.process.id === 2 && m.event !== "joined",
      60_000,
    );
    assert.equal(left.event, "left");
    // The last cellapp cannot hand its cells to anyone: only a forced stop will do.
    const only = await post("/api/processes/1/shutdown");
    assert.equal(only.status, 409);
    assert.match((only.body as { error: { message: string } }).error.message, /force=true/);

    // A cellapp on a known port, killed (forced: it exits at once, dead), then started again there: restarted.
    const port = freePort();
    await c.procs.start(["--role=cell", `--port=${port}`, `--mgr=${c.mgr.address}`]);
    const joined = await w.next("the new cellapp", (m) => m.type === "event" && m.event === "joined");
    const killed = await post(`/api/processes/${joined.process.id}/shutdown?force=true`);
    assert.equal(killed.status, 202);
    const dead = await w.next("it to die", (m) => m.type === "event" && m.process.id === joined.process.id);
    assert.equal(dead.event, "dead");
    await c.procs.start(["--role=cell", `--port=${port}`, `--mgr=${c.mgr.address}`]);
    const again = await w.next("it to come back", (m) => m.type === "event" && m.event === "restarted");
    assert.equal(again.previousId, joined.process.id);
    await w.close();
  },
);

Deno.test("watch: a crowded cell comes as counts per square; a deleted space ends its topic", opts, async () => {
  await using c = await watchCluster({ npcs: 40, watch: { denseCell: 10 } });
  const w = await WatchClient.open(c);
  w.send({ op: "subscribe", topic: "space:1" });
  const e = await w.next("space 1's entities", (m) => m.topic === "space:1" && m.type === "entities");
  assert.equal(e.cells.length, 1);
  const [cell] = e.cells;
  assert.equal(cell.points, undefined);
  assert.equal(cell.count, 40);
  assert.equal(cell.grid.counts.length, cell.grid.cols * cell.grid.rows);
  assert.equal(cell.grid.counts.reduce((a: number, b: number) => a + b, 0), 40);

  const made = await api(c.admin, "/api/spaces", {
    method: "POST",
    headers: c.auth,
    body: JSON.stringify({ bounds: [0, 0, 100, 100], entities: [{ type: "NPC", count: 3 }] }),
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const id = (made.body as { id: number }).id;
  w.send({ op: "subscribe", topic: `space:${id}` });
  const points = await w.next(
    `space ${id}'s entities`,
    (m) => m.topic === `space:${id}` && m.type === "entities" && m.cells[0]?.count === 3,
  );
  assert.equal(points.cells[0].points.length, 3);
  assert.equal((await api(c.admin, `/api/spaces/${id}`, { method: "DELETE", headers: c.auth })).status, 202);
  const ended = await w.next("the topic to end", (m) => m.op === "unsubscribed" && m.topic === `space:${id}`, 20_000);
  assert.equal(ended.reason, `space ${id} is gone`);
  await waitFor("its feed to stop", () => !c.hub.feeds.includes(`space:${id}`));
  await w.close();
});
