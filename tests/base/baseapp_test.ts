/**
 * The baseapp's side of logins, routes and persistence, with a BaseApp in this process (for its hooks and options)
 * joined to a real cellappmgr and cellapp; what reached the cell is judged by what the cell does and what the admin
 * API and other clients see.
 */
import assert from "node:assert/strict";
import { ErrorCode } from "../../core/proto/mod.ts";
import { clientPlacement, NEW_SPACE, type PlacementHook, serverPlacement } from "../../core/placement.ts";
import { decodePersistentState, encodePersistentState, PropertyContainer } from "../../core/def/mod.ts";
import { type Client, LoginError } from "../../client/mod.ts";
import type { ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { login, startBase, testRegistry } from "./fixtures.ts";
import { api } from "../../testing/procs.ts";
import { cellReady, entityAt, seen, waitForPosition } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = testRegistry.get("Avatar");
const post = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Positions reach other clients packed relative to a reference point: equal within a centimetre or so. */
const near = (a: number, b: number): boolean => Math.abs(a - b) < 0.02;

/** Records the entities entering a client's AoI, by id. */
function enters(c: Client): number[] {
  const out: number[] = [];
  c.on("enter", (e) => out.push(e.id));
  return out;
}

Deno.test(
  "login over WebSocket: loginOk with the player, the cell entity created in the named space, cellReady, witness on and off",
  opts,
  async () => {
    await using b = await startBase();
    const made = await api(b.admin, "/api/spaces", post({ bounds: [-50, -50, 50, 50], cells: 1 }));
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const spaceId = (made.body as { id: number }).id;
    assert.ok(spaceId > 1);

    const c = await login(b.app, { name: "ann", spaceId, position: { x: 10, y: 0, z: -3 } });
    assert.equal(c.player.type.name, "Avatar");
    assert.ok(Number.isInteger(c.player.id) && c.player.id > 0, "the id comes from the cellappmgr's pool");
    assert.equal(c.player.props.gold, 0);
    assert.equal(await cellReady(c), spaceId);
    const cell = (await entityAt(b.admin, c.player.id))!;
    assert.deepEqual([cell.type, cell.spaceId, cell.position], ["Avatar", spaceId, [10, 0, -3]]);

    // Another player nearby: each sees the other, so both witnesses are on (the SDK sent enableEntities).
    const watcher = await login(b.app, { name: "watcher", spaceId, position: { x: 12, y: 0, z: -3 } });
    const annSeen = await seen(watcher, c.player.id);
    assert.equal(annSeen.props.playerName, "ann", "a new entity is named after its account");
    await seen(c, watcher.player.id);

    // The client goes: its witness goes too. A new connection within the grace period gets a fresh witness,
    // which introduces the watcher again (an old witness would think the client still had it).
    c.close();
    await waitFor("the proxy to lose its client", () => b.app.proxies.get(c.player.id)?.hasClient === false);
    const again = await login(b.app, { name: "ann" });
    assert.equal(again.player.id, c.player.id);
    const seenAgain = enters(again);
    await waitFor("the watcher to enter the new connection's AoI", () => seenAgain.includes(watcher.player.id));
    again.close();
    watcher.close();
  },
);

Deno.test("the clientUrl is reported to the cellappmgr and plain HTTP is told to upgrade", opts, async () => {
  await using b = await startBase();
  assert.match(b.app.clientUrl, /^ws:\/\/127\.0\.0\.1:\d+\/$/);
  const cluster = (await api(b.admin, "/api/cluster")).body as ClusterView;
  const me = cluster.processes.find((p) => p.id === b.app.member.link.id);
  assert.equal(me?.role, "baseapp");
  assert.equal(me?.clientUrl, b.app.clientUrl);
  const res = await fetch(b.app.clientUrl.replace("ws:", "http:"));
  assert.equal(res.status, 426);
  assert.match(await res.text(), /WebSocket/);
});

Deno.test(
  "enableEntities before the cell entity exists: the witness is enabled once it does",
  opts,
  async () => {
    await using b = await startBase();
    const watcher = await login(b.app, { name: "watcher", position: { x: 1, y: 0, z: 1 } });
    await cellReady(watcher);
    // Hold the cellapp still so the cell entity cannot be created yet (well within the cellappmgr's 2.5 s
    // heartbeat limit), and log in meanwhile.
    const cellapp = b.cluster.cellapps[0];
    Deno.kill(cellapp.pid, "SIGSTOP");
    let early: Client;
    let entered: number[];
    try {
      early = await login(b.app, { name: "early", position: { x: 0, y: 0, z: 0 } });
      entered = enters(early);
      const proxy = b.app.proxies.get(early.player.id)!;
      await waitFor("enableEntities at the proxy", () => proxy.entitiesEnabled);
      assert.equal(proxy.cellState, "creating", "no cell entity yet");
      assert.equal(proxy.witness, false, "so no witness yet");
      assert.equal(early.player.spaceId, 0, "no cellReady yet");
    } finally {
      Deno.kill(cellapp.pid, "SIGCONT");
    }
    assert.equal(await cellReady(early), 1, "no space named: the default space");
    await waitFor("the watcher in the AoI: the witness was enabled", () => entered.includes(watcher.player.id));
    early.close();
    watcher.close();
  },
);

Deno.test(
  "the server decides where a login goes: a new account at the spawn point, a returning one where it was saved; " +
    "what the client asks for is ignored and makes no space",
  opts,
  async () => {
    await using b = await startBase({ placement: serverPlacement, spawnPoint: [5, 0, 7] });
    const made = await api(b.admin, "/api/spaces", post({ bounds: [-50, -50, 50, 50], cells: 1 }));
    const other = (made.body as { id: number }).id;
    const spaceIds = async () =>
      ((await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces.map((s) => s.id);
    const before = await spaceIds();

    const c = await login(b.app, { name: "newcomer", spaceId: other, position: { x: 10, y: 0, z: -3 } });
    assert.equal(await cellReady(c), 1, "not the space it asked for: the default space");
    assert.deepEqual((await entityAt(b.admin, c.player.id))!.position, [5, 0, 7], "at the spawn point");
    c.move({ x: 6, y: 0, z: 7 });
    await waitForPosition(b.admin, c.player.id, 6, 7);
    await c.logout();

    const again = await login(b.app, { name: "newcomer", spaceId: 0, position: { x: 100, y: 0, z: 100 } });
    assert.equal(await cellReady(again), 1);
    assert.deepEqual((await entityAt(b.admin, again.player.id))!.position, [6, 0, 7], "where it was saved");
    assert.deepEqual(await spaceIds(), before, "asking for space 0 made no space");
    again.close();
  },
);

Deno.test(
  "a game's placement hook lets a client choose among allowed spaces, or make one; a space that is gone sends " +
    "the player to the spawn point",
  opts,
  async () => {
    let allowed = -1;
    const hook: PlacementHook = ({ account, server, asked }) => {
      if (account === "pioneer" && asked.spaceId === NEW_SPACE) {
        return { spaceId: NEW_SPACE, position: server.position };
      }
      if (asked.spaceId === allowed) return { spaceId: allowed, position: asked.position ?? server.position };
      return server;
    };
    await using b = await startBase({ placement: hook });
    const made = await api(b.admin, "/api/spaces", post({ bounds: [-50, -50, 50, 50], cells: 1 }));
    allowed = (made.body as { id: number }).id;

    const pioneer = await login(b.app, { name: "pioneer", spaceId: 0 });
    const space = await cellReady(pioneer);
    assert.ok(space > allowed, `a new space ${space}`);
    const spaces = (await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] };
    assert.ok(spaces.spaces.some((s) => s.id === space && !s.isDefault));
    const settler = await login(b.app, { name: "settler", spaceId: 0 });
    assert.equal(await cellReady(settler), 1, "the hook lets only the pioneer make a space");

    const visitor = await login(b.app, { name: "visitor", spaceId: allowed, position: { x: 10, y: 0, z: -3 } });
    assert.equal(await cellReady(visitor), allowed, "an allowed space");
    assert.deepEqual((await entityAt(b.admin, visitor.player.id))!.position, [10, 0, -3]);
    await visitor.logout();
    // Emptied, it may already be shutting down by itself.
    const del = await api(b.admin, `/api/spaces/${allowed}`, { method: "DELETE", headers: post({}).headers });
    assert.ok([202, 404].includes(del.status), JSON.stringify(del.body));
    await waitFor("the space gone", async () => (await api(b.admin, `/api/spaces/${allowed}`)).status === 404);
    allowed = -1;
    const back = await login(b.app, { name: "visitor" });
    assert.equal(await cellReady(back), 1, "its saved space is gone: the default space");
    assert.deepEqual((await entityAt(b.admin, back.player.id))!.position, [0, 0, 0], "at the spawn point");
    pioneer.close();
    settler.close();
    back.close();
  },
);

Deno.test(
  "a client that may choose asks for a space that does not exist: it goes to the spawn point",
  opts,
  async () => {
    await using b = await startBase({ placement: clientPlacement });
    const lost = await login(b.app, { name: "lost", spaceId: 999_999, position: { x: 3, y: 0, z: 3 } });
    assert.equal(await cellReady(lost), 1);
    assert.deepEqual((await entityAt(b.admin, lost.player.id))!.position, [0, 0, 0]);
    lost.close();
  },
);

Deno.test("a placement hook that fails or answers nonsense fails the login, naming the entity", opts, async () => {
  await using b = await startBase({
    placement: ({ account, server }) => {
      if (account === "thrower") throw new Error("no realm");
      return { ...server, position: [NaN, 0, 0] };
    },
  });
  await assert.rejects(login(b.app, { name: "thrower" }), /the placement hook failed for entity \d+: no realm/);
  await assert.rejects(login(b.app, { name: "nonsense" }), /the placement hook gave entity \d+ .*within the world/);
});

Deno.test("wrong password and forbidden account creation are refused with a reason", opts, async () => {
  await using b = await startBase({ autoCreateAccounts: false });
  await assert.rejects(
    login(b.app, { name: "nobody" }),
    (e) => e instanceof LoginError && /no account/.test(e.message),
  );
  await using b2 = await startBase({ checkLogin: ({ name }) => (name === "mallory" ? "banned" : null) }, {
    cluster: b.cluster,
  });
  (await login(b2.app, { name: "zed", password: "right" })).close();
  await assert.rejects(login(b2.app, { name: "zed", password: "wrong" }), /wrong password/);
  await assert.rejects(login(b2.app, { name: "mallory" }), /banned/);
});

Deno.test(
  "routes: exposed cell calls with the caller, exposed base calls, positions, the witness's bytes to the client",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "router", position: { x: 0, y: 0, z: 0 } });
    const d = await login(b.app, { name: "other", position: { x: 3, y: 0, z: 0 } });
    await cellReady(c);
    await cellReady(d);
    const dSeen = await seen(c, d.player.id);
    const cSeen = await seen(d, c.player.id);

    // The player's own exposed method: the cell gets the caller's id and raises the counter.
    c.callCell(null, "raiseCounter");
    await waitFor("the own client to see counter 1", () => c.player.props.counter === 1);
    await waitFor("the other client to see counter 1", () => cSeen.props.counter === 1);

    // Another entity's exposed method, by its type: the cell is told the caller, and raiseCounter refuses a
    // caller that is not the entity itself. Then d raises its own; both go over the same channel in order.
    c.callCell(d.player.id, "raiseCounter");
    d.callCell(null, "raiseCounter");
    d.move({ x: 3.5, y: 0, z: 0 }, [0, 0, 0]);
    // Everything d's entity did before that move reaches c with it (events, then volatile data).
    await waitFor("d's move at c", () => near(dSeen.position.x, 3.5));
    assert.equal(dSeen.props.counter, 1, "only d's own call raised d's counter");

    // An exposed base method: the base script answers through a client method and raises gold.
    const chats: unknown[][] = [];
    c.on("playerMethod", (name, args) => chats.push([name, ...args]));
    c.callBase("say", "hello");
    await waitFor("the base's reply", () => chats.length === 1);
    assert.deepEqual(chats[0], ["onChat", c.player.id, "echo: hello"]);
    await waitFor("gold (BASE_AND_CLIENT) to reach the own client", () => c.player.props.gold === 1);

    // A position: the cell moves the entity; the direction reaches the other client as the yaw.
    c.move({ x: 0.5, y: 0, z: 0.5 }, [1, 0, 0]);
    await waitForPosition(b.admin, c.player.id, 0.5, 0.5);
    await waitFor("c's move at d", () => near(cSeen.position.x, 0.5) && near(cSeen.position.z, 0.5));
    assert.ok(Math.abs(cSeen.yaw - 1) < 0.05, `yaw ${cSeen.yaw}`);

    // What the witness sends goes through the baseapp to the client unchanged and decodes.
    assert.ok(c.stats.aoiMessages > 0 && d.stats.aoiMessages > 0);
    assert.equal(c.stats.undecoded + d.stats.undecoded, 0);
    c.close();
    d.close();
  },
);

Deno.test(
  "logout writes base and cell persistent properties in one commit; logging in again restores them",
  opts,
  async () => {
    await using b = await startBase();
    // A returning player: account and saved entity in the baseapp's real KV.
    const acct = await b.app.accounts.login({ name: "keeper", password: "pw", remote: "test" });
    assert.ok(acct.ok);
    const id = acct.entityId;
    const base = new PropertyContainer(avatar, "base");
    base.set("gold", 5);
    const saved = new PropertyContainer(avatar, "cell");
    saved.set("playerName", "keeper");
    saved.set("maxHp", 250);
    saved.set("level", 7);
    saved.set("inventory", [{ itemId: 5, count: 2, bound: true }]);
    await b.app.store.save(id, {
      type: "Avatar",
      base: encodePersistentState(base),
      cell: encodePersistentState(saved),
      position: [3, 0, 4],
      direction: [0, 0, 0],
      spaceId: 1,
    });

    const observer = await login(b.app, { name: "observer", position: { x: 5, y: 0, z: 4 } });
    const c = await login(b.app, { name: "keeper" });
    assert.equal(c.player.id, id);
    assert.equal(c.player.props.gold, 5);
    await cellReady(c);
    let seenKeeper = await seen(observer, id);
    assert.deepEqual([seenKeeper.props.playerName, seenKeeper.props.level], ["keeper", 7]);

    // Changes: base (gold, by the base script; secretNote, base-only), cell (the cell uses an item), and one that
    // is not persistent (counter).
    c.callBase("say", "one");
    c.callBase("say", "two");
    await waitFor("gold 7", () => c.player.props.gold === 7);
    b.app.proxies.get(id)!.props.secretNote = "base only";
    c.callCell(null, "useItem", 0);
    c.callCell(null, "raiseCounter");
    await waitFor("counter 1 at the observer", () => seenKeeper.props.counter === 1);

    await c.logout();
    assert.equal(b.app.proxies.size, 1, "only the observer's proxy is left");
    assert.equal(await entityAt(b.admin, id), null, "the cell entity is gone");
    await waitFor("keeper to leave the observer's AoI", () => !observer.entities.has(id));
    const stored = (await b.app.store.load(id))!;
    assert.deepEqual(stored.position, [3, 0, 4]);
    const cellBack = new PropertyContainer(avatar, "cell");
    assert.deepEqual(decodePersistentState(stored.cell, cellBack), []);
    assert.deepEqual(
      [cellBack.get("playerName"), cellBack.get("maxHp"), cellBack.get("level")],
      ["keeper", 250, 7],
    );
    assert.deepEqual(
      JSON.parse(JSON.stringify(cellBack.get("inventory"))),
      [{ itemId: 5, count: 1, bound: true }],
      "the cell's own change came back from the cell",
    );

    const again = await login(b.app, { name: "keeper" });
    assert.equal(again.player.id, id);
    assert.equal(again.player.props.gold, 7, "base property restored and sent to the own client");
    assert.equal(b.app.proxies.get(id)!.props.secretNote, "base only");
    await cellReady(again);
    assert.deepEqual((await entityAt(b.admin, id))!.position, [3, 0, 4], "the saved position");
    await waitFor("the observer to see keeper enter again", () => observer.entities.has(id));
    seenKeeper = observer.entities.get(id)!;
    assert.deepEqual(
      [seenKeeper.props.playerName, seenKeeper.props.level, seenKeeper.props.counter],
      ["keeper", 7, 0],
      "cell properties restored; non-persistent ones start from their defaults",
    );
    // The restored cell state went to the cell: logging out again brings it back unchanged.
    await again.logout();
    const twice = new PropertyContainer(avatar, "cell");
    decodePersistentState((await b.app.store.load(id))!.cell, twice);
    assert.deepEqual(
      [twice.get("maxHp"), twice.get("level"), JSON.parse(JSON.stringify(twice.get("inventory")))],
      [250, 7, [{ itemId: 5, count: 1, bound: true }]],
    );
    observer.close();
  },
);

Deno.test("a second login takes the proxy over; the first connection is told and closed", opts, async () => {
  await using b = await startBase();
  const first = await login(b.app, { name: "twice" });
  await cellReady(first);
  const errors: number[] = [];
  first.on("error", (code) => errors.push(code));
  const closed = new Promise<number>((r) => first.on("close", (code) => r(code)));
  const before = first.closedWith;
  assert.equal(before, null, "open: no close yet");
  const second = await login(b.app, { name: "twice" });
  assert.equal(second.player.id, first.player.id);
  assert.equal(await closed, 4002);
  const after = first.closedWith;
  assert.equal(after?.code, 4002, "the close is kept for who listens late");
  assert.match(after?.reason ?? "", /logged in elsewhere/);
  assert.deepEqual(errors, [ErrorCode.loggedInElsewhere]);
  assert.equal(await cellReady(second), 1, "the cell entity stays and the new connection is told");
  assert.ok(await entityAt(b.admin, second.player.id));
  second.close();
});

Deno.test("a disconnected proxy logs out after the grace period", opts, async () => {
  await using b = await startBase({ disconnectGraceMs: 100 });
  const c = await login(b.app, { name: "leaver" });
  await cellReady(c);
  c.close();
  await waitFor("the logout", () => b.app.proxies.size === 0);
  assert.ok(await b.app.store.load(c.player.id));
  assert.equal(await entityAt(b.admin, c.player.id), null, "the cell entity is gone");
});
