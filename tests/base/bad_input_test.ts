import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../core/def/bytes.ts";
import {
  C2S,
  encodeArgs,
  encodeClientMessage,
  ErrorCode,
  readServerMessage,
  S2C,
  type ServerMessage,
} from "../../core/def/client_protocol.ts";
import type { Client } from "../../client/mod.ts";
import { login, startBase, testRegistry } from "./fixtures.ts";
import { waitFor } from "../helpers/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = testRegistry.get("Avatar");

/** A client's error replies as [code, about]. */
function errorsOf(c: Client): [number, number, string][] {
  const out: [number, number, string][] = [];
  c.on("error", (code, message, about) => out.push([code, about, message]));
  return out;
}

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

/** Logged-in client plus an observer that must notice nothing; both have their cell entity. */
async function pair(b: Awaited<ReturnType<typeof startBase>>) {
  const bad = await login(b.app, { name: "bad", position: { x: 0, y: 0, z: 0 } });
  const good = await login(b.app, { name: "good", position: { x: 1, y: 0, z: 1 } });
  await waitFor("both cells", () => bad.player.spaceId === 1 && good.player.spaceId === 1);
  return { bad, good, badErrors: errorsOf(bad), goodErrors: errorsOf(good) };
}

/** The observer still works: its call reaches the cell and it saw no error. */
async function assertUntouched(b: Awaited<ReturnType<typeof startBase>>, good: Client, goodErrors: unknown[]) {
  const before = b.fake.of("clientCall").filter((c) => c.caller === good.player.id).length;
  good.callCell(null, "useItem", 1);
  await b.fake.waitCall(
    "clientCall",
    () => b.fake.of("clientCall").filter((c) => c.caller === good.player.id).length > before,
  );
  assert.deepEqual(goodErrors, []);
  assert.equal(good.closed, false);
}

Deno.test("bad input: anything before login gets notLoggedIn and goes nowhere", opts, async () => {
  await using b = await startBase();
  const r = await raw(b.app.clientUrl);
  r.ws.send(encodeClientMessage({ id: C2S.enableEntities }));
  r.ws.send(encodeClientMessage({ id: C2S.position, position: [1, 2, 3], direction: [0, 0, 0] }));
  r.ws.send(encodeClientMessage({ id: C2S.callBase, method: 0, args: new Uint8Array() }));
  await waitFor("three errors", () => r.got.length === 3);
  for (const m of r.got) assert.deepEqual(m.id === S2C.error && [m.code], [ErrorCode.notLoggedIn]);
  assert.equal(b.fake.calls.length, 0);
  r.ws.close();
});

Deno.test("bad input: unknown messages, unexposed or unknown methods, wrong arguments", opts, async () => {
  await using b = await startBase({ limits: { abuseLimit: 100 } });
  const { bad, good, badErrors, goodErrors } = await pair(b);
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
      encodeClientMessage({ id: C2S.position, position: [0, 0, 0], direction: [0, 0, 0] }).slice(0, 9),
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

  assert.equal(
    b.fake.of("clientCall").filter((c) => c.caller === bad.player.id).length,
    0,
    "nothing bad reached the cell",
  );
  assert.equal(bad.player.props.gold, 0);
  assert.equal(bad.closed, false);
  await assertUntouched(b, good, goodErrors);
});

Deno.test("bad input: an oversized frame and a text frame are refused", opts, async () => {
  await using b = await startBase({ limits: { maxFrame: 1024 } });
  const { bad, good, badErrors, goodErrors } = await pair(b);
  const big = new Uint8Array(2000);
  big[0] = C2S.enableEntities;
  bad.sendFrame(big);
  await waitFor("frameTooLarge", () => badErrors.find((e) => e[0] === ErrorCode.frameTooLarge));
  bad.sendFrame("hello");
  await waitFor("textFrame", () => badErrors.find((e) => e[0] === ErrorCode.textFrame));
  assert.equal(bad.closed, false);
  await assertUntouched(b, good, goodErrors);
});

Deno.test("bad input: movement faster than the top speed is corrected back, not applied", opts, async () => {
  await using b = await startBase({ maxSpeed: 5 });
  const { bad, good, badErrors, goodErrors } = await pair(b);
  const forced: unknown[] = [];
  bad.on("forcedPosition", (p) => forced.push(p));
  bad.move({ x: 2, y: 0, z: 0 });
  await b.fake.waitCall("clientPosition", (c) => c.id === bad.player.id && c.pos[0] === 2);
  bad.move({ x: 500, y: 0, z: 0 });
  await waitFor("the correction", () => forced.length === 1);
  assert.deepEqual(forced[0], { x: 2, y: 0, z: 0 });
  assert.equal(badErrors[0][0], ErrorCode.tooFast);
  assert.deepEqual(bad.player.position, { x: 2, y: 0, z: 0 }, "the SDK adopts the correction");
  bad.move({ x: 2.5, y: 0, z: 0 });
  await b.fake.waitCall("clientPosition", (c) => c.id === bad.player.id && c.pos[0] === 2.5);
  assert.equal(b.fake.of("clientPosition").filter((c) => c.pos[0] === 500).length, 0);
  // NaN and infinity are refused too.
  bad.sendFrame(encodeClientMessage({ id: C2S.position, position: [NaN, 0, 0], direction: [0, 0, 0] }));
  await waitFor("badPosition", () => badErrors.find((e) => e[0] === ErrorCode.badPosition));
  await assertUntouched(b, good, goodErrors);
});

Deno.test("bad input: a client over the abuse threshold is disconnected; the others notice nothing", opts, async () => {
  await using b = await startBase({ limits: { abuseLimit: 5 } });
  const { bad, good, badErrors, goodErrors } = await pair(b);
  const closed = new Promise<number>((r) => bad.on("close", (code) => r(code)));
  for (let i = 0; i < 10; i++) bad.sendFrame(new Uint8Array([30]));
  assert.equal(await closed, 1008);
  assert.equal(badErrors.at(-1)![0], ErrorCode.tooManyErrors);
  assert.ok(badErrors.length <= 7, `stopped reading at the threshold: ${badErrors.length}`);
  await b.fake.waitCall("disableWitness", (c) => c.id === bad.player.id);
  await assertUntouched(b, good, goodErrors);
});
