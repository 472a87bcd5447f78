import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../core/bytes/mod.ts";
import { makePose } from "../../core/geo/mod.ts";
import {
  C2S,
  encodeArgs,
  encodeClientMessage,
  ErrorCode,
  readServerMessage,
  S2C,
  type ServerMessage,
} from "../../core/proto/mod.ts";
import type { Client, EntityView } from "../../client/mod.ts";
import { errorsOf, login, startBase, type TestBase, testRegistry } from "./fixtures.ts";
import { cellReady, entityAt, seen, waitForPosition } from "../helpers/players.ts";
import { api } from "../../testing/procs.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = testRegistry.get("Avatar");

/** A raw WebSocket that has not logged in; collects the session messages it gets. */
async function raw(url: string): Promise<{ ws: WebSocket; got: ServerMessage[]; closed: Promise<number> }> {
  const ws = new WebSocket(url);
  ws.binaryType = "arraybuffer";
  const got: ServerMessage[] = [];
  ws.onmessage = (ev) => {
    const r = new ByteReader(new Uint8Array(ev.data));
    while (r.remaining > 0) got.push(readServerMessage(r, r.u8()));
  };
  const closed = new Promise<number>((res) => ws.onclose = (ev) => res(ev.code));
  await new Promise((res) => ws.onopen = res);
  return { ws, got, closed };
}

/**
 * A logged-in client that will misbehave and an observer that must notice nothing; both have their cell entity and
 * see each other. `badSeen` is the bad client's entity as the observer sees it.
 */
async function pair(b: TestBase): Promise<{
  bad: Client;
  good: Client;
  badErrors: [number, number, string][];
  goodErrors: [number, number, string][];
  badSeen: EntityView;
}> {
  const bad = await login(b.app, { name: "bad", position: { x: 0, y: 0, z: 0 } });
  const good = await login(b.app, { name: "good", position: { x: 1, y: 0, z: 1 } });
  await cellReady(bad);
  await cellReady(good);
  const badSeen = await seen(good, bad.player.id);
  await seen(bad, good.player.id);
  return { bad, good, badErrors: errorsOf(bad), goodErrors: errorsOf(good), badSeen };
}

/**
 * Waits until everything `bad` sent so far was handled by its cell and what the cell did reached the observer: a
 * move goes to the cell after the earlier messages, and the witness sends an entity's events before its volatile data.
 */
async function settled(b: TestBase, bad: Client, badSeen: EntityView, x: number): Promise<void> {
  bad.move({ x, y: 0, z: 0 });
  await waitForPosition(b.admin, bad.player.id, x, 0);
  await waitFor(`the observer to see the bad client at x=${x}`, () => Math.abs(badSeen.position.x - x) < 0.02);
}

/** The x of an entity's position on its cell. */
async function entityAtX(b: TestBase, id: number): Promise<number | undefined> {
  return (await entityAt(b.admin, id))?.position[0];
}

/** The observer still works: its own call reaches its cell, and it saw no error. */
async function assertUntouched(good: Client, goodErrors: unknown[]): Promise<void> {
  const before = good.player.props.counter as number;
  good.callCell(null, "raiseCounter");
  await waitFor("the observer's call to take effect", () => good.player.props.counter === before + 1);
  assert.deepEqual(goodErrors, []);
  assert.equal(good.closed, false);
}

Deno.test("bad input: anything before login gets notLoggedIn and goes nowhere", opts, async () => {
  await using b = await startBase();
  const r = await raw(b.app.clientUrl);
  r.ws.send(encodeClientMessage({ id: C2S.enableEntities }));
  r.ws.send(encodeClientMessage({ id: C2S.position, pose: makePose(1, 2, 3) }));
  r.ws.send(encodeClientMessage({ id: C2S.callBase, method: 0, args: new Uint8Array() }));
  await waitFor("three errors", () => r.got.length === 3);
  for (const m of r.got) assert.deepEqual(m.id === S2C.error && [m.code], [ErrorCode.notLoggedIn]);
  assert.equal(b.app.proxies.size, 0, "no proxy");
  const space = (await api(b.admin, "/api/spaces/1")).body as { cells: { reals: number }[] };
  assert.equal(space.cells[0].reals, 0, "no cell entity");
  r.ws.close();
});

Deno.test("bad input: unknown messages, unexposed or unknown methods, wrong arguments", opts, async () => {
  await using b = await startBase({ limits: { abuseLimit: 100 } });
  const { bad, good, badErrors, goodErrors, badSeen } = await pair(b);
  const raiseCounter = avatar.method("cell", "raiseCounter");
  const useItem = avatar.method("cell", "useItem");
  const cases: [string, Uint8Array, number][] = [
    ["an unknown session id", new Uint8Array([30]), ErrorCode.unknownMessage],
    ["an id of no protocol", new Uint8Array([200, 1, 2]), ErrorCode.unknownMessage],
    ["a server-to-client id", new Uint8Array([S2C.loginOk]), ErrorCode.unknownMessage],
    [
      "an unexposed cell method",
      encodeClientMessage({
        id: C2S.callCell,
        target: bad.player.id,
        typeId: avatar.id,
        method: avatar.method("cell", "takeDamage").index,
        args: encodeArgs(avatar.method("cell", "takeDamage"), [5, 1]),
      }),
      ErrorCode.notExposed,
    ],
    [
      "an unexposed base method",
      encodeClientMessage({
        id: C2S.callBase,
        method: avatar.method("base", "grantGold").index,
        args: encodeArgs(avatar.method("base", "grantGold"), [1000]),
      }),
      ErrorCode.notExposed,
    ],
    [
      "an unknown base method",
      encodeClientMessage({ id: C2S.callBase, method: 99, args: new Uint8Array() }),
      ErrorCode.unknownMethod,
    ],
    [
      "an unknown entity type",
      encodeClientMessage({ id: C2S.callCell, target: 5, typeId: 42, method: 0, args: new Uint8Array() }),
      ErrorCode.unknownMethod,
    ],
    [
      "a method of another type on the player",
      encodeClientMessage({ id: C2S.callCell, target: bad.player.id, typeId: 2, method: 0, args: new Uint8Array([1]) }),
      ErrorCode.unknownMethod,
    ],
    [
      "a string where a UINT8 belongs",
      encodeClientMessage({
        id: C2S.callCell,
        target: bad.player.id,
        typeId: avatar.id,
        method: useItem.index,
        args: new Uint8Array([5, 104, 101, 108, 108, 111]),
      }),
      ErrorCode.badArguments,
    ],
    [
      "an argument to a method that takes none",
      encodeClientMessage({
        id: C2S.callCell,
        target: bad.player.id,
        typeId: avatar.id,
        method: raiseCounter.index,
        args: new Uint8Array([1]),
      }),
      ErrorCode.badArguments,
    ],
    [
      "too few arguments",
      encodeClientMessage({
        id: C2S.callCell,
        target: bad.player.id,
        typeId: avatar.id,
        method: useItem.index,
        args: new Uint8Array(),
      }),
      ErrorCode.badArguments,
    ],
    [
      "a string longer than its declared maximum",
      (() => {
        const w = new ByteWriter();
        w.string("x".repeat(300));
        return encodeClientMessage({ id: C2S.callBase, method: avatar.method("base", "say").index, args: w.toBytes() });
      })(),
      ErrorCode.badArguments,
    ],
    [
      "invalid UTF-8 in a string",
      encodeClientMessage({
        id: C2S.callBase,
        method: avatar.method("base", "say").index,
        args: new Uint8Array([2, 0xff, 0xfe]),
      }),
      ErrorCode.badArguments,
    ],
    [
      "a truncated message",
      encodeClientMessage({ id: C2S.position, pose: makePose(0, 0, 0) }).slice(0, 9),
      ErrorCode.malformed,
    ],
    [
      "a second login",
      encodeClientMessage({ id: C2S.login, name: "bad", password: "pw", spaceId: null, position: null }),
      ErrorCode.alreadyLoggedIn,
    ],
  ];
  for (const [what, bytes, code] of cases) {
    const n = badErrors.length;
    bad.sendFrame(bytes);
    await waitFor(`the error for ${what}`, () => badErrors.length > n);
    assert.equal(badErrors[n][0], code, `${what}: ${badErrors[n][2]}`);
  }
  // "one extra argument": the good half of the frame still counts, the bad one does not.
  const n = badErrors.length;
  const extra = encodeClientMessage({
    id: C2S.callCell,
    target: bad.player.id,
    typeId: avatar.id,
    method: useItem.index,
    args: new Uint8Array([1, 2]),
  });
  bad.sendFrame(extra);
  await waitFor("the error for an extra argument", () => badErrors.length > n);
  assert.equal(badErrors[n][0], ErrorCode.badArguments);

  await settled(b, bad, badSeen, 0.5);
  assert.equal(badSeen.props.counter, 0, "nothing bad reached the cell");
  assert.equal(bad.player.props.gold, 0);
  assert.equal(bad.closed, false);
  await assertUntouched(good, goodErrors);
});

Deno.test("bad input: an oversized frame and a text frame are refused", opts, async () => {
  await using b = await startBase({ limits: { maxFrame: 1024 } });
  const { bad, good, badErrors, goodErrors } = await pair(b);
  bad.sendFrame("hello");
  await waitFor("textFrame", () => badErrors.find((e) => e[0] === ErrorCode.textFrame));
  assert.equal(bad.closed, false);
  // An oversized frame is refused from its header: the connection closes with 1009 before the payload is read.
  const closed = new Promise<[number, string]>((r) => bad.on("close", (code, reason) => r([code, reason])));
  const big = new Uint8Array(2000);
  big[0] = C2S.enableEntities;
  bad.sendFrame(big);
  assert.deepEqual(await within("the close", closed), [1009, "message of 2000 bytes exceeds the limit of 1024"]);
  assert.equal(badErrors.length, 1, "no error reply besides textFrame");
  await assertUntouched(good, goodErrors);
});

Deno.test("bad input: movement faster than the top speed is corrected back, not applied", opts, async () => {
  await using b = await startBase({ maxSpeed: 5 });
  const { bad, good, badErrors, goodErrors, badSeen } = await pair(b);
  const forced: unknown[] = [];
  bad.on("forcedPosition", (p) => forced.push(p));
  const xs: number[] = [];
  good.on("move", (e) => e.id === bad.player.id && xs.push(e.position.x));
  bad.move({ x: 2, y: 0, z: 0 });
  await waitForPosition(b.admin, bad.player.id, 2, 0);
  bad.move({ x: 500, y: 0, z: 0 });
  await waitFor("the correction", () => forced.length === 1);
  assert.deepEqual(forced[0], { x: 2, y: 0, z: 0 });
  assert.equal(badErrors[0][0], ErrorCode.tooFast);
  assert.deepEqual(bad.player.position, { x: 2, y: 0, z: 0 }, "the SDK adopts the correction");
  // A call after the refused move reaches the cell after it would have; the observer gets the entity's events
  // with (or before) its volatile data, so once it sees the counter it has seen any move that came before.
  bad.callCell(null, "raiseCounter");
  await waitFor("the bad client's counter at the observer", () => badSeen.props.counter === 1);
  assert.ok(xs.every((x) => x < 3), `the observer saw only accepted positions: ${xs}`);
  assert.deepEqual(await entityAtX(b, bad.player.id), 2, "the cell never had the refused position");
  bad.move({ x: 2.5, y: 0, z: 0 });
  await waitForPosition(b.admin, bad.player.id, 2.5, 0);
  // NaN and infinity are refused too.
  bad.sendFrame(encodeClientMessage({ id: C2S.position, pose: makePose(NaN, 0, 0) }));
  await waitFor("badPosition", () => badErrors.find((e) => e[0] === ErrorCode.badPosition));
  bad.sendFrame(encodeClientMessage({ id: C2S.position, pose: makePose(Infinity, 0, 0) }));
  await waitFor("a second badPosition", () => badErrors.filter((e) => e[0] === ErrorCode.badPosition).length === 2);
  await settled(b, bad, badSeen, 3);
  await assertUntouched(good, goodErrors);
});

Deno.test("bad input: a client over the abuse threshold is disconnected; the others notice nothing", opts, async () => {
  await using b = await startBase({ limits: { abuseLimit: 5 } });
  const { bad, good, badErrors, goodErrors } = await pair(b);
  const closed = new Promise<number>((r) => bad.on("close", (code) => r(code)));
  for (let i = 0; i < 10; i++) bad.sendFrame(new Uint8Array([30]));
  assert.equal(await closed, 1008);
  assert.equal(badErrors.at(-1)![0], ErrorCode.tooManyErrors);
  assert.ok(badErrors.length <= 7, `stopped reading at the threshold: ${badErrors.length}`);
  // Its witness went with the connection: a new connection of the account gets a fresh one, which introduces
  // the observer again.
  await waitFor("the proxy to lose its client", () => b.app.proxies.get(bad.player.id)?.hasClient === false);
  const back = await login(b.app, { name: "bad" });
  const entered: number[] = [];
  back.on("enter", (e) => entered.push(e.id));
  await waitFor("the observer in the new connection's AoI", () => entered.includes(good.player.id));
  await assertUntouched(good, goodErrors);
  back.close();
});
