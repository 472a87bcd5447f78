/**
 * The client protocol's declaration (core/proto) against the bytes docs/protocol.md fixes: every message, written
 * from its declaration and by the witness's writers, is byte for byte what the hand-written encoders before it wrote
 * (the hex below was taken from them); it decodes back to what was written; bad input is refused naming the message
 * and field, and what follows it still decodes.
 */
import assert from "node:assert/strict";
import { ByteReader, ByteWriter } from "../../core/bytes/mod.ts";
import { writeChange } from "../../core/def/mod.ts";
import { makePose } from "../../core/geo/mod.ts";
import {
  AOI_MESSAGES,
  type AoiDecodeContext,
  type AoiMessageIn,
  byCode,
  C2S,
  CLIENT_MESSAGES,
  type ClientMessageIn,
  decodeClientMessage,
  DIR_NONE,
  DIR_Y,
  DIR_YP,
  DIR_YPR,
  encodeClientMessage,
  encodeServerMessage,
  ErrorCode,
  fields,
  MAX_SESSION_ID,
  message,
  NO_ALIAS,
  POS_FULL,
  POS_NONE,
  POS_XYZ,
  POS_XZ,
  ProtocolError,
  readAoiMessage,
  readClientMessage,
  readMessage,
  readServerMessage,
  S2C,
  SERVER_MESSAGES,
  type ServerMessageIn,
  skipVolatile,
  VOLATILE,
  writeAoiMessage,
  writeCreate,
  writeDetailLevel,
  writeEnter,
  writeLeave,
  writeMessage,
  writeMethod,
  writeMethodCall,
  writeOwnMethod,
  writeOwnProperty,
  writeProperty,
  writeProps,
  writeReference,
  writeRequestUpdate,
  writeVolatile,
} from "../../core/proto/mod.ts";
import { registry } from "../../entities/mod.ts";

/** What the hand-written encoders wrote for the messages below, as hex. */
const GOLDEN: Record<string, string> = {
  login: "0103616e6e0a70c3a4737377c3b6726408010000c03f000000c000209643",
  loginNoSpace: "010162000000",
  enableEntities: "02",
  callBase: "030203010203",
  callCell: "04ac0201000109",
  position: "0500002841000000000004fac40000003f000080be00004040",
  logout: "06",
  resume: "0706746f6b2e656e",
  loginOk: "1080808080802001020405",
  loginFailed: "11026e6f",
  error: "120c050c62616420706f736974696f6e",
  forcedPosition: "130000803f0000004000004040cdcccc3dcdcc4c3e9a99993e",
  baseProperty: "14020601",
  baseClientCall: "150100",
  cellReady: "1603000080400000a0400000c040",
  cellGone: "170f7370616365207368757420646f776e",
  loggedOut: "18",
  resumeToken: "19c801747474747474747474747474747474747474747474747474747474747474747474747474747474747474" +
    "747474747474747474747474747474747474747474747474747474747474747474747474747474747474747474" +
    "747474747474747474747474747474747474747474747474747474747474747474747474747474747474747474" +
    "747474747474747474747474747474747474747474747474747474747474747474747474747474747474747474" +
    "7474747474747474747474747474747474747474747474",
  baseApps: "1a020877733a2f2f613a310b7773733a2f2f623a322f78",
  resumeElsewhere: "1b0877733a2f2f633a33056d6f766564",
  enter: "208080808020044d",
  create: "210c010000803f00000040000040400000003f0000803e000000be010800000100000000020000000003000004" +
    "00050000000006000700000000",
  leave: "220c0205ac02",
  propertyAlias: "23030209",
  propertyId: "23ff8080808080200209",
  detailLevel: "24ff0c000200000100000000",
  reference: "250000c84200000040000096c30000003f",
  method: "2609014d000000026869",
  ownProperty: "270401",
  ownMethod: "28000477617665",
  requestUpdate: "300c030301028407",
  volatileXZ: "5603500c3614",
  volatileXYZ: "5103600b28001814d7",
  volatileFull: "4c80808080802000007a440000004000803b4504080c",
  volatileNone: "4b08",
};

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
const bytes = (h: string) => new Uint8Array(h.match(/../g)!.map((x) => parseInt(x, 16)));
const f = Math.fround;

const CLIENT: Record<string, ClientMessageIn> = {
  login: { id: C2S.login, name: "ann", password: "pässwörd", spaceId: 7, position: [1.5, -2, 300.25] },
  loginNoSpace: { id: C2S.login, name: "b", password: "", spaceId: null, position: null },
  enableEntities: { id: C2S.enableEntities },
  callBase: { id: C2S.callBase, method: 2, args: new Uint8Array([1, 2, 3]) },
  callCell: { id: C2S.callCell, target: 300, typeId: 1, method: 0, args: new Uint8Array([9]) },
  position: { id: C2S.position, pose: makePose(10.5, 0, -2000.125, 0.5, -0.25, 3) },
  logout: { id: C2S.logout },
  resume: { id: C2S.resume, token: "tok.en" },
};

const SERVER: Record<string, ServerMessageIn> = {
  loginOk: { id: S2C.loginOk, entityId: 2 ** 40, typeId: 1, ownState: new Uint8Array([4, 5]) },
  loginFailed: { id: S2C.loginFailed, reason: "no" },
  error: { id: S2C.error, code: 12, about: 5, message: "bad position" },
  forcedPosition: { id: S2C.forcedPosition, pose: makePose(1, 2, 3, f(0.1), f(0.2), f(0.3)) },
  baseProperty: { id: S2C.baseProperty, change: new Uint8Array([6, 1]) },
  baseClientCall: { id: S2C.baseClientCall, method: 1, args: new Uint8Array([]) },
  cellReady: { id: S2C.cellReady, spaceId: 3, position: [4, 5, 6] },
  cellGone: { id: S2C.cellGone, reason: "space shut down" },
  loggedOut: { id: S2C.loggedOut },
  resumeToken: { id: S2C.resumeToken, token: "t".repeat(200) },
  baseApps: { id: S2C.baseApps, urls: ["ws://a:1", "wss://b:2/x"] },
  resumeElsewhere: { id: S2C.resumeElsewhere, url: "ws://c:3", reason: "moved" },
};

Deno.test("session messages: the declaration writes the fixed bytes and reads back what was written", () => {
  for (const [name, m] of Object.entries(CLIENT)) {
    const b = encodeClientMessage(m);
    assert.equal(hex(b), GOLDEN[name], name);
    assert.deepEqual(decodeClientMessage(b), m, name);
  }
  for (const [name, m] of Object.entries(SERVER)) {
    const b = encodeServerMessage(m);
    assert.equal(hex(b), GOLDEN[name], name);
    const r = new ByteReader(b);
    assert.deepEqual(readServerMessage(r, r.u8()), m, name);
    assert.equal(r.remaining, 0, name);
  }
  for (const spec of [...Object.values(CLIENT_MESSAGES), ...Object.values(SERVER_MESSAGES)]) {
    assert.ok(spec.code >= 1 && spec.code <= MAX_SESSION_ID, `${spec.name}: a session code`);
  }
});

/** Decodes `b` as one client message, returning the ProtocolError it raises. */
function refused(b: Uint8Array): ProtocolError {
  try {
    decodeClientMessage(b);
  } catch (e) {
    assert.ok(e instanceof ProtocolError, String(e));
    return e;
  }
  assert.fail(`${hex(b)} was accepted`);
}

Deno.test("bad client input is refused naming the message and field, and harms nothing after it", () => {
  const login = encodeClientMessage(CLIENT.login);
  const cut = refused(login.subarray(0, login.length - 2));
  assert.equal(cut.code, ErrorCode.malformed);
  assert.match(cut.message, /login \(message 1\) position: .*truncated/);

  const farSpace = encodeClientMessage({ ...CLIENT.login, spaceId: 2 ** 32 } as ClientMessageIn);
  assert.equal(refused(farSpace).code, ErrorCode.badArguments);
  assert.match(refused(farSpace).message, /login \(message 1\) spaceId: no space 4294967296/);
  const outside = encodeClientMessage({ ...CLIENT.login, position: [2e9, 0, 0] } as ClientMessageIn);
  assert.equal(refused(outside).code, ErrorCode.badPosition);
  assert.match(refused(outside).message, /login \(message 1\) position/);

  const noEntity = refused(encodeClientMessage({ ...CLIENT.callCell, target: 0 } as ClientMessageIn));
  assert.deepEqual([noEntity.code, /callCell \(message 4\) target: no entity 0/.test(noEntity.message)], [
    ErrorCode.badArguments,
    true,
  ]);
  const longToken = refused(encodeClientMessage({ id: C2S.resume, token: "x".repeat(513) }));
  assert.equal(longToken.code, ErrorCode.badArguments);
  assert.match(longToken.message, /resume \(message 7\) token: 513 characters/);
  const badText = refused(new Uint8Array([C2S.resume, 2, 0xff, 0xfe]));
  assert.equal(badText.code, ErrorCode.malformed);
  assert.match(badText.message, /resume \(message 7\) token/);
  const unknown = refused(new Uint8Array([30]));
  assert.equal(unknown.code, ErrorCode.unknownMessage);
  assert.match(unknown.message, /30/);

  // A frame's good message after a refused one of another frame decodes as ever: nothing is left over.
  const r = new ByteReader(encodeClientMessage(CLIENT.position));
  assert.deepEqual(readClientMessage(r, r.u8()), CLIENT.position);

  const w = new ByteWriter();
  w.u8(S2C.baseApps);
  w.varint(257);
  const r2 = new ByteReader(w.toBytes());
  assert.throws(() => readServerMessage(r2, r2.u8()), (e: ProtocolError) => {
    assert.equal(e.code, ErrorCode.malformed);
    assert.match(e.message, /baseApps \(message 26\) urls: 257 items, at most 256/);
    return true;
  });
});

const avatar = registry.get("Avatar");
const props = avatar.clientProperties;
const values = avatar.properties.map((p) => p.type.defaultValue());
const ctx: AoiDecodeContext = {
  registry,
  aliasId: (a) => a === 3 || a === 9 ? 12 : -1,
  typeOf: () => avatar,
  ownType: avatar,
  scale: 0.5,
};

function callBytes(method: number, args: unknown[]): Uint8Array {
  const w = new ByteWriter();
  writeMethodCall(w, avatar, avatar.clientMethods[method], args);
  return w.toBytes();
}

function propBytes(n: number): Uint8Array {
  const w = new ByteWriter();
  writeProps(w, values, props, n);
  return w.toBytes();
}

/** Each AoI message by the witness's writer, and the same message as its declaration takes it. */
const AOI: [string, (w: ByteWriter) => void, AoiMessageIn][] = [
  ["enter", (w) => writeEnter(w, 2 ** 33, 4, 77), { kind: "enter", id: 2 ** 33, alias: 4, life: 77 }],
  [
    "create",
    (w) => writeCreate(w, 12, avatar.id, makePose(1, 2, 3, 0.5, 0.25, -0.125), 1, values, props, props.length),
    {
      kind: "create",
      id: 12,
      type: avatar,
      pose: makePose(1, 2, 3, 0.5, 0.25, -0.125),
      detailLevel: 1,
      props: propBytes(props.length),
    },
  ],
  ["leave", (w) => writeLeave(w, 12, [5, 300, 7], 2), { kind: "leave", id: 12, stamps: [5, 300] }],
  [
    "propertyAlias",
    (w) => writeProperty(w, 3, 12, new Uint8Array([2, 9])),
    { kind: "property", alias: 3, id: 12, change: new Uint8Array([2, 9]) },
  ],
  [
    "propertyId",
    (w) => writeProperty(w, NO_ALIAS, 2 ** 40, new Uint8Array([2, 9])),
    { kind: "property", alias: NO_ALIAS, id: 2 ** 40, change: new Uint8Array([2, 9]) },
  ],
  [
    "detailLevel",
    (w) => writeDetailLevel(w, NO_ALIAS, 12, 0, values, props, 2),
    { kind: "detailLevel", alias: NO_ALIAS, id: 12, detailLevel: 0, props: propBytes(2) },
  ],
  [
    "reference",
    (w) => writeReference(w, 100, 2, -300, 0.5),
    { kind: "reference", x: 100, y: 2, z: -300, scale: 0.5 },
  ],
  [
    "method",
    (w) => writeMethod(w, 9, 12, callBytes(1, [77, "hi"])),
    { kind: "method", alias: 9, id: 12, method: avatar.clientMethods[1], args: [77, "hi"] },
  ],
  [
    "ownProperty",
    (w) => writeOwnProperty(w, new Uint8Array([4, 1])),
    { kind: "ownProperty", change: new Uint8Array([4, 1]) },
  ],
  [
    "ownMethod",
    (w) => writeOwnMethod(w, callBytes(0, ["wave"])),
    { kind: "ownMethod", method: avatar.clientMethods[0], args: ["wave"] },
  ],
  [
    "requestUpdate",
    (w) => writeRequestUpdate(w, 12, 3, [1, 2, 900]),
    { kind: "requestUpdate", id: 12, life: 3, stamps: [1, 2, 900] },
  ],
];

Deno.test("AoI messages: the witness's writers and the declaration write the same fixed bytes, which read back", () => {
  const w = new ByteWriter();
  for (const [name, write, m] of AOI) {
    w.reset();
    write(w);
    assert.equal(hex(w.bytes()), GOLDEN[name], `${name} by its writer`);
    w.reset();
    writeAoiMessage(w, m);
    assert.equal(hex(w.bytes()), GOLDEN[name], `${name} by its declaration`);
    // The change bytes here are not a change of the type; real ones are read back below.
    if (m.kind === "property" || m.kind === "ownProperty") continue;
    const r = new ByteReader(w.toBytes());
    const got = readAoiMessage(r, r.u8(), ctx) as unknown as Record<string, unknown>;
    assert.equal(r.remaining, 0, name);
    assert.equal(got.kind, m.kind, name);
    if (m.kind === "create" || m.kind === "detailLevel") {
      assert.equal((got.props as unknown[]).length, m.kind === "create" ? props.length : 2, name);
      assert.equal(got.detailLevel, m.detailLevel, name);
      if (m.kind === "create") assert.deepEqual(got.pose, m.pose, name);
    } else {
      assert.deepEqual(got, m, name);
    }
  }
  // The change bytes a witness sends decode to the change written.
  const own = new ByteWriter();
  const gold = avatar.property("gold");
  writeChange(own, gold, [], 5, -1, -1);
  w.reset();
  writeOwnProperty(w, own.toBytes());
  writeProperty(w, 3, 12, own.toBytes());
  const r = new ByteReader(w.toBytes());
  const m = readAoiMessage(r, r.u8(), ctx);
  assert.ok(m.kind === "ownProperty" && m.change.value === 5 && m.change.index === gold.index);
  const p = readAoiMessage(r, r.u8(), ctx);
  assert.ok(p.kind === "property" && p.alias === 3 && p.id === 12 && p.change.value === 5);
  assert.equal(r.remaining, 0);
});

Deno.test("volatile updates: the fixed bytes, and back", () => {
  const w = new ByteWriter();
  const cases: [string, Parameters<typeof writeVolatile>, Record<string, unknown>][] = [
    ["volatileXZ", [w, 3, 7, POS_XZ, 10, 0, -20, DIR_Y, 0.5, 0, 0, 0.5], { alias: 3, id: 12, posType: POS_XZ }],
    ["volatileXYZ", [w, 3, 7, POS_XYZ, 10, 4, -20, DIR_YP, 0.5, -1, 0, 1], { alias: 3, posType: POS_XYZ }],
    [
      "volatileFull",
      [w, NO_ALIAS, 2 ** 40, POS_FULL, 1000, 2, 3000, DIR_YPR, 0.1, 0.2, 0.3, 1],
      { alias: NO_ALIAS, id: 2 ** 40, x: 1000, y: 2, z: 3000 },
    ],
    ["volatileNone", [w, NO_ALIAS, 8, POS_NONE, 0, 0, 0, DIR_NONE, 0, 0, 0, 1], { id: 8, posType: POS_NONE }],
  ];
  for (const [name, args, expect] of cases) {
    w.reset();
    assert.ok(writeVolatile(...args));
    assert.equal(hex(w.bytes()), GOLDEN[name], name);
    const r = new ByteReader(w.toBytes());
    const m = readAoiMessage(r, r.u8(), ctx) as unknown as Record<string, unknown>;
    assert.equal(m.kind, "volatile");
    for (const [k, v] of Object.entries(expect)) assert.equal(m[k], v, `${name} ${k}`);
  }
  w.reset();
  assert.equal(writeVolatile(w, 3, 7, POS_XZ, 5000, 0, 0, DIR_NONE, 0, 0, 0, 1), false, "too far to pack");
  assert.equal(w.pos, 0, "nothing written");
});

Deno.test("skipVolatile steps over each of the 32 volatile codes exactly as far as reading it does", () => {
  const w = new ByteWriter();
  for (const alias of [3, NO_ALIAS]) {
    for (const posType of [POS_XYZ, POS_XZ, POS_NONE, POS_FULL]) {
      for (const dirType of [DIR_YPR, DIR_YP, DIR_Y, DIR_NONE]) {
        w.reset();
        assert.ok(writeVolatile(w, alias, 2 ** 33, posType, 10, 4, -20, dirType, 0.5, -1, 0.25, 1));
        w.u8(0xee); // what follows: both must stop right before it
        const bytes = w.toBytes(), code = VOLATILE + (alias === NO_ALIAS ? 0 : 16) + posType * 4 + dirType;
        const read = new ByteReader(bytes), skipped = new ByteReader(bytes);
        assert.equal(read.u8(), code);
        readAoiMessage(read, code, ctx);
        skipVolatile(skipped, skipped.u8());
        assert.equal(skipped.pos, read.pos, `code ${code}`);
        assert.equal(skipped.u8(), 0xee);
        // Cut one byte short, it is refused as reading it is.
        const cut = new ByteReader(bytes.subarray(0, read.pos - 1));
        assert.throws(() => skipVolatile(cut, cut.u8()), /malformed volatile/, `code ${code} cut short`);
      }
    }
  }
});

Deno.test("bad AoI input is refused naming the message and field", () => {
  const req = (n: number) => {
    const w = new ByteWriter();
    writeRequestUpdate(w, 12, 3, new Array(n).fill(1));
    const r = new ByteReader(w.toBytes());
    return () => readAoiMessage(r, r.u8(), ctx);
  };
  assert.throws(req(33), /requestUpdate \(message 48\) stamps: 33 stamps, at most 32/);
  assert.doesNotThrow(req(32));
  const w = new ByteWriter();
  w.u8(AOI_MESSAGES.method.code);
  w.u8(NO_ALIAS);
  w.varint(12);
  w.varint(99);
  const r = new ByteReader(w.toBytes());
  assert.throws(() => readAoiMessage(r, r.u8(), ctx), (e: ProtocolError) => {
    assert.equal(e.code, ErrorCode.malformed);
    assert.match(e.message, /method \(message 38\) method: Avatar has no client method index 99/);
    return true;
  });
  const r2 = new ByteReader(bytes("4c80"));
  assert.throws(() => readAoiMessage(r2, r2.u8(), ctx), /malformed volatile \(message 76\)/);
  assert.throws(() => readAoiMessage(new ByteReader(new Uint8Array()), 41, ctx), /41 is not an AOI message/);
});

Deno.test("a new message is one entry: its codes are checked unique, and it encodes and decodes from the entry", () => {
  // The next free code after the server's session messages.
  const code = Math.max(...Object.values(SERVER_MESSAGES).map((d) => d.code)) + 1;
  const table = {
    ...SERVER_MESSAGES,
    gameDefs: message(code, "gameDefs", { version: fields.varint, defs: fields.blob }),
  };
  const m = { id: code, version: 3, defs: new Uint8Array([1, 2]) };
  const w = new ByteWriter();
  writeMessage(w, table.gameDefs, m);
  assert.equal(hex(w.bytes()), code.toString(16).padStart(2, "0") + "03020102");
  const r = new ByteReader(w.toBytes());
  assert.deepEqual(readMessage(r, byCode(table)[r.u8()]!, null, "id"), m);
  assert.throws(() => byCode({ ...SERVER_MESSAGES, clash: message(16, "clash", {}) }), /code 16 is already loginOk/);
  assert.doesNotThrow(() => byCode(CLIENT_MESSAGES, SERVER_MESSAGES, AOI_MESSAGES), "no two messages share a code");
});
