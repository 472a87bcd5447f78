import assert from "node:assert/strict";
import { decodeArgs, encodeArgs, encodeServerMessage, ErrorCode, S2C } from "../../core/def/client_protocol.ts";
import { decodeCellBackup, encodePersistentState, PropertyContainer } from "../../core/def/mod.ts";
import { connect, LoginError } from "../../client/mod.ts";
import { login, startBase, testRegistry } from "./fixtures.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = testRegistry.get("Avatar");

Deno.test(
  "login over WebSocket: loginOk with the player, the cell entity created in the named space, cellReady",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "ann", spaceId: 5, position: { x: 10, y: 0, z: -3 } });
    assert.equal(c.player.type.name, "Avatar");
    assert.ok(c.player.id >= 1000, "the id comes from the cellappmgr's pool");
    assert.equal(c.player.props.gold, 0);
    const ready = await waitFor("cellReady", () => c.player.spaceId === 5);
    assert.ok(ready);
    const spec = b.fake.specs[0];
    assert.equal(spec.entityId, c.player.id);
    assert.equal(spec.spaceId, 5);
    assert.equal(spec.type, "Avatar");
    assert.deepEqual(spec.position, [10, 0, -3]);
    assert.equal(spec.hasClient, true);
    assert.equal(spec.baseAddress, b.app.address);
    const cell = decodeCellBackup(avatar, spec.props);
    assert.equal(cell.get("playerName"), "ann", "a new entity is named after its account");
    // enableEntities was sent by the SDK after login: the cell gets its witness.
    await b.fake.waitCall("enableWitness", (x) => x.id === c.player.id);
    c.close();
    await b.fake.waitCall("disableWitness", (x) => x.id === c.player.id);
  },
);

Deno.test("the clientUrl is reported to the cellappmgr and plain HTTP is told to upgrade", opts, async () => {
  await using b = await startBase();
  assert.match(b.app.clientUrl, /^ws:\/\/127\.0\.0\.1:\d+\/$/);
  assert.equal(b.fake.registered?.clientUrl, b.app.clientUrl);
  const res = await fetch(b.app.clientUrl.replace("ws:", "http:"));
  assert.equal(res.status, 426);
  assert.match(await res.text(), /WebSocket/);
});

Deno.test(
  "enableEntities before the cell entity exists: the witness is enabled once it does (seed 000)",
  opts,
  async () => {
    await using b = await startBase();
    b.fake.createDelayMs = 300;
    const c = await login(b.app, { name: "early" });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(b.fake.of("enableWitness").length, 0, "no cell entity yet, so no witness yet");
    await b.fake.waitCall("enableWitness", (x) => x.id === c.player.id);
    assert.equal(b.fake.specs[0].spaceId, 1, "no space named: the default space");
    c.close();
  },
);

Deno.test(
  "a new space when the client asks for space 0; a failed creation is reported to the client",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "pioneer", spaceId: 0 });
    await waitFor("cellReady in the new space", () => c.player.spaceId === 77);
    assert.equal(b.fake.specs[0].spaceId, 0);
    b.fake.failCreate = "no cellapp";
    const errors: string[] = [];
    const d = await connect(b.app.clientUrl, { name: "unlucky", password: "pw" }, { registry: testRegistry });
    d.on("error", (code, msg) => errors.push(`${code} ${msg}`));
    await waitFor("a noCell error", () => errors.find((e) => e.startsWith(`${ErrorCode.noCell} `)));
    assert.match(errors[0], /no cellapp/);
  },
);

Deno.test("wrong password and forbidden account creation are refused with a reason", opts, async () => {
  await using b = await startBase({ autoCreateAccounts: false });
  await assert.rejects(
    login(b.app, { name: "nobody" }),
    (e) => e instanceof LoginError && /no account/.test(e.message),
  );
  await using b2 = await startBase({ checkLogin: ({ name }) => (name === "mallory" ? "banned" : null) });
  await login(b2.app, { name: "zed", password: "right" });
  await assert.rejects(login(b2.app, { name: "zed", password: "wrong" }), /wrong password/);
  await assert.rejects(login(b2.app, { name: "mallory" }), /banned/);
});

Deno.test(
  "routes: exposed cell calls with the caller, exposed base calls, positions, toClient bytes as they are",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "router", position: { x: 0, y: 0, z: 0 } });
    await waitFor("cellReady", () => c.player.spaceId === 1);

    c.callCell(null, "useItem", 3);
    const call = await b.fake.waitCall("clientCall");
    assert.equal(call.caller, c.player.id);
    assert.equal(call.target, c.player.id);
    assert.equal(call.method, avatar.method("cell", "useItem").index);
    assert.deepEqual(decodeArgs(avatar.method("cell", "useItem"), call.args), [3]);

    // Another entity's exposed method, by its type.
    const npc = testRegistry.get("NPC");
    c.sendMessage({
      id: 4,
      target: 4242,
      typeId: npc.id,
      method: 0,
      args: encodeArgs(npc.method("cell", "talkTo"), [7]),
    });
    await b.fake.waitCall("clientCall", (x) => x.target === 4242 && x.caller === c.player.id);

    const chats: unknown[][] = [];
    c.on("playerMethod", (name, args) => chats.push([name, ...args]));
    c.callBase("say", "hello");
    await waitFor("the base's reply", () => chats.length === 1);
    assert.deepEqual(chats[0], ["onChat", c.player.id, "echo: hello"]);
    await waitFor("gold (BASE_AND_CLIENT) to reach the own client", () => c.player.props.gold === 1);

    c.move({ x: 0.5, y: 0, z: 0.5 }, [1, 0, 0]);
    const pos = await b.fake.waitCall("clientPosition");
    assert.deepEqual(pos, { kind: "clientPosition", id: c.player.id, pos: [0.5, 0, 0.5], dir: [1, 0, 0] });

    // What a witness sends reaches the client unchanged.
    const bytesBefore = c.stats.bytesIn;
    const payload = encodeServerMessage({
      id: S2C.baseClientCall,
      method: 1,
      args: encodeArgs(avatar.clientMethods[1], [9, "x"]),
    });
    b.fake.toClient(c.player.id, payload);
    await waitFor("the forwarded call", () => chats.length === 2);
    assert.deepEqual(chats[1], ["onChat", 9, "x"]);
    assert.ok(c.stats.bytesIn - bytesBefore >= payload.length);
    c.close();
  },
);

Deno.test(
  "logout writes base and cell persistent properties in one commit; logging in again restores them",
  opts,
  async () => {
    await using b = await startBase();
    const c = await login(b.app, { name: "keeper", position: { x: 3, y: 0, z: 4 } });
    await waitFor("cellReady", () => c.player.spaceId === 1);
    const id = c.player.id;
    c.callBase("say", "one");
    c.callBase("say", "two");
    await waitFor("gold 2", () => c.player.props.gold === 2);
    b.app.proxies.get(id)!.props.secretNote = "base only";
    // What the cell would hold at logout.
    const cell = new PropertyContainer(avatar, "cell");
    cell.set("maxHp", 250);
    cell.set("level", 7);
    cell.set("playerName", "keeper");
    cell.set("inventory", [{ itemId: 5, count: 2, bound: true }]);
    b.fake.cellState.set(id, encodePersistentState(cell));

    await c.logout();
    assert.equal(b.fake.of("destroyCellEntity").length, 1);
    assert.equal(b.app.proxies.size, 0);
    const stored = (await b.app.store.load(id))!;
    assert.deepEqual(stored.position, [3, 0, 4]);

    const again = await login(b.app, { name: "keeper" });
    assert.equal(again.player.id, id);
    assert.equal(again.player.props.gold, 2, "base property restored and sent to the own client");
    assert.equal(b.app.proxies.get(id)!.props.secretNote, "base only");
    await waitFor("the second cell entity", () => b.fake.specs.length === 2);
    const spec = b.fake.specs[1];
    assert.deepEqual(spec.position, [3, 0, 4], "the saved position");
    const restored = decodeCellBackup(avatar, spec.props);
    assert.equal(restored.get("maxHp"), 250);
    assert.equal(restored.get("level"), 7);
    assert.deepEqual(JSON.parse(JSON.stringify(restored.get("inventory"))), [{ itemId: 5, count: 2, bound: true }]);
    assert.equal(restored.get("hp"), 100, "non-persistent properties start from their defaults");
    again.close();
  },
);

Deno.test("a second login takes the proxy over; the first connection is told and closed", opts, async () => {
  await using b = await startBase();
  const first = await login(b.app, { name: "twice" });
  const errors: number[] = [];
  first.on("error", (code) => errors.push(code));
  const closed = new Promise<number>((r) => first.on("close", (code) => r(code)));
  const second = await login(b.app, { name: "twice" });
  assert.equal(second.player.id, first.player.id);
  assert.equal(await closed, 4002);
  assert.deepEqual(errors, [ErrorCode.loggedInElsewhere]);
  assert.equal(b.fake.specs.length, 1, "the cell entity stays");
  second.close();
});

Deno.test("a disconnected proxy logs out after the grace period", opts, async () => {
  await using b = await startBase({ disconnectGraceMs: 100 });
  const c = await login(b.app, { name: "leaver" });
  await waitFor("cellReady", () => c.player.spaceId === 1);
  c.close();
  await waitFor("the logout", () => b.app.proxies.size === 0);
  assert.ok(await b.app.store.load(c.player.id));
});
