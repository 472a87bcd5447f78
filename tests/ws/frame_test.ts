import assert from "node:assert/strict";
import {
  closePayload,
  NEED_MORE,
  Op,
  parseClose,
  unmask,
  WsProtocolError,
  WsReader,
  WsWriter,
} from "../../core/ws/frame.ts";
import { clientFrame } from "../helpers/ws_frames.ts";

const enc = new TextEncoder();

/** Deterministic bytes, so a failure can be repeated. */
function bytes(n: number, seed = 1): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

function expectError(f: () => unknown, code: number, re: RegExp, what = ""): void {
  assert.throws(f, (e: unknown) => e instanceof WsProtocolError && e.code === code && re.test(e.message), what);
}

Deno.test("unmask: matches a byte-by-byte XOR for every length and alignment", () => {
  const mask = [0x12, 0x34, 0x56, 0x78];
  for (const len of [0, 1, 2, 3, 4, 5, 7, 63, 64, 65, 66, 67, 200, 1001]) {
    for (let offset = 0; offset < 4; offset++) {
      const data = bytes(len, len + offset);
      const buf = new Uint8Array(1 + offset + 4 + len);
      // A view that does not start at byte 0 of its buffer, as the reader's payloads do not.
      const view = buf.subarray(1);
      view.set(mask, offset);
      view.set(data, offset + 4);
      unmask(view, offset + 4, len, offset);
      const want = data.map((b, i) => b ^ mask[i & 3]);
      assert.deepEqual(view.subarray(offset + 4), want, `len ${len} offset ${offset}`);
    }
  }
  // The plain case, checked exactly: mask then payload.
  for (const len of [0, 3, 64, 99, 4096]) {
    const data = bytes(len, 7);
    const frame = clientFrame(Op.binary, data);
    const r = new WsReader(1 << 20);
    r.push(frame);
    assert.equal(r.next(), Op.binary);
    assert.deepEqual(r.payload, data);
  }
});

Deno.test("reader: frames split at every byte, back to back, give the same messages", () => {
  const msgs = [bytes(0), bytes(5), bytes(125, 2), bytes(126, 3), bytes(300, 4), bytes(70_000, 5)];
  const stream = new Uint8Array(msgs.reduce((n, m) => n + m.length + 14, 0));
  let at = 0;
  for (const m of msgs) {
    const f = clientFrame(Op.binary, m);
    stream.set(f, at);
    at += f.length;
  }
  for (const step of [1, 3, 1000, at]) {
    const r = new WsReader(1 << 20);
    const got: Uint8Array[] = [];
    for (let i = 0; i < at; i += step) {
      r.push(stream.subarray(i, Math.min(at, i + step)));
      for (let op = r.next(); op !== NEED_MORE; op = r.next()) {
        assert.equal(op, Op.binary);
        got.push(r.payload);
      }
    }
    assert.equal(got.length, msgs.length, `step ${step}`);
    // Delivered views stay valid after more reading.
    got.forEach((g, i) => assert.deepEqual(g, msgs[i], `step ${step}, message ${i}`));
  }
});

Deno.test("reader: fragments are joined; control frames may come between them", () => {
  const r = new WsReader(1000);
  r.push(clientFrame(Op.text, enc.encode("hel"), { fin: false }));
  r.push(clientFrame(Op.ping, enc.encode("p")));
  r.push(clientFrame(Op.continuation, enc.encode("lo "), { fin: false }));
  r.push(clientFrame(Op.continuation, new Uint8Array(0), { fin: false }));
  r.push(clientFrame(Op.continuation, enc.encode("wörld")));
  assert.equal(r.next(), Op.ping);
  assert.deepEqual(r.payload, enc.encode("p"));
  assert.equal(r.next(), Op.text);
  assert.equal(new TextDecoder().decode(r.payload), "hello wörld");
  assert.equal(r.next(), NEED_MORE);
});

Deno.test("reader: the limit is checked on the header, before the payload arrives", () => {
  const r = new WsReader(1024);
  const head = clientFrame(Op.binary, new Uint8Array(0), { announce: 10 * 1024 * 1024 });
  r.push(head);
  expectError(() => r.next(), 1009, /^message of 10485760 bytes exceeds the limit of 1024$/);

  // Fragments count together; the limit may change between messages.
  const f = new WsReader(100);
  f.push(clientFrame(Op.binary, bytes(60), { fin: false }));
  assert.equal(f.next(), NEED_MORE);
  f.push(clientFrame(Op.continuation, new Uint8Array(0), { announce: 41 }));
  expectError(() => f.next(), 1009, /message of 101 bytes exceeds the limit of 100/);

  const g = new WsReader(10);
  g.push(clientFrame(Op.binary, bytes(10)));
  assert.equal(g.next(), Op.binary);
  g.maxMessage = 9;
  g.push(clientFrame(Op.binary, bytes(10)));
  expectError(() => g.next(), 1009, /10 bytes exceeds the limit of 9/);

  // A 64-bit length of 2^53 or more.
  const huge = new Uint8Array(14);
  huge.set([0x82, 0xff, 0x00, 0x20, 0, 0, 0, 0, 0, 0]);
  const h = new WsReader(1 << 30);
  h.push(huge);
  expectError(() => h.next(), 1009, /at least 2\^53 bytes/);
  // The most significant bit of a 64-bit length must be 0: a protocol error, not a size.
  for (const first of [0x80, 0xff]) {
    const bad = new Uint8Array(14);
    bad.set([0x82, 0xff, first, 0, 0, 0, 0, 0, 0, 5]);
    const t = new WsReader(1 << 30);
    t.push(bad);
    expectError(() => t.next(), 1002, /most significant bit/, `first length byte ${first}`);
  }
});

Deno.test("reader: a message's buffer grows as its payload arrives, not to the length its header declares", () => {
  const r = new WsReader(16 * 1024 * 1024);
  const payload = bytes(4 * 1024 * 1024, 3);
  const frame = clientFrame(Op.binary, payload);
  r.push(frame.subarray(0, 200));
  assert.equal(r.next(), NEED_MORE);
  assert.ok(r.capacity < 1024 * 1024, `holds ${r.capacity} bytes for 200 received`);
  for (let at = 200; at < frame.length; at += 65536) {
    r.push(frame.subarray(at, Math.min(frame.length, at + 65536)));
    const got = r.next();
    assert.ok(r.capacity <= 2 * Math.min(frame.length, at + 65536) + 65536, `holds ${r.capacity} bytes`);
    if (got !== NEED_MORE) {
      assert.equal(got, Op.binary);
      assert.deepEqual(r.payload, payload);
    }
  }
});

Deno.test("reader: protocol violations are 1002 (1007 for bad UTF-8)", () => {
  const cases: [string, Uint8Array[], number, RegExp][] = [
    ["unmasked", [clientFrame(Op.binary, bytes(3), { mask: false })], 1002, /must be masked/],
    ["RSV1", [clientFrame(Op.binary, bytes(3), { rsv: 0x40 })], 1002, /RSV/],
    ["opcode 3", [clientFrame(3, bytes(3))], 1002, /unknown opcode 3/],
    ["opcode 11", [clientFrame(11, bytes(3))], 1002, /unknown opcode 11/],
    ["long ping", [clientFrame(Op.ping, bytes(126))], 1002, /more than 125/],
    ["fragmented ping", [clientFrame(Op.ping, bytes(3), { fin: false })], 1002, /fragmented control/],
    ["lone continuation", [clientFrame(Op.continuation, bytes(3))], 1002, /no message to continue/],
    [
      "new message inside a fragmented one",
      [clientFrame(Op.binary, bytes(3), { fin: false }), clientFrame(Op.binary, bytes(3))],
      1002,
      /before the fragmented one ended/,
    ],
    ["bad UTF-8", [clientFrame(Op.text, new Uint8Array([0xc3, 0x28]))], 1007, /UTF-8/],
  ];
  for (const [what, frames, code, re] of cases) {
    const r = new WsReader(1000);
    for (const f of frames) r.push(f);
    expectError(
      () => {
        while (r.next() !== NEED_MORE) { /* until the bad frame */ }
      },
      code,
      re,
      what,
    );
  }
});

Deno.test("close payloads: codes, empty, 1 byte, bad code, long reasons cut on a character boundary", () => {
  assert.deepEqual(parseClose(new Uint8Array(0)), { code: 1005, reason: "" });
  assert.deepEqual(parseClose(closePayload(4000, "bye")), { code: 4000, reason: "bye" });
  expectError(() => parseClose(new Uint8Array([3])), 1002, /1-byte/);
  expectError(() => parseClose(closePayload(1005, "")), 1002, /invalid code 1005/);
  expectError(() => parseClose(new Uint8Array([0x03, 0xe8, 0xff])), 1007, /UTF-8/);
  const long = closePayload(1000, "é".repeat(100));
  assert.ok(long.length <= 125, `${long.length}`);
  assert.equal(parseClose(long).reason, "é".repeat(61));
});

Deno.test("writer: lengths of 125, 126, 65535, 65536 bytes and parts read back; buffers are recycled", () => {
  const w = new WsWriter(16);
  const sizes = [0, 125, 126, 65535, 65536];
  for (const n of sizes) w.frame(Op.binary, bytes(n, n));
  w.frameParts(Op.binary, [bytes(3, 1), bytes(200, 2)]);
  const out = w.take();
  let at = 0;
  const read: Uint8Array[] = [];
  while (at < out.length) {
    assert.equal(out[at], 0x80 | Op.binary);
    let len = out[at + 1];
    assert.equal(len & 0x80, 0, "server frames are not masked");
    let head = 2;
    if (len === 126) [len, head] = [(out[at + 2] << 8) | out[at + 3], 4];
    else if (len === 127) [len, head] = [Number(new DataView(out.buffer, at + 2, 8).getBigUint64(0)), 10];
    read.push(out.slice(at + head, at + head + len));
    at += head + len;
  }
  assert.deepEqual(read.map((r) => r.length), [...sizes, 203]);
  sizes.forEach((n, i) => assert.deepEqual(read[i], bytes(n, n)));
  assert.deepEqual(read[5], new Uint8Array([...bytes(3, 1), ...bytes(200, 2)]));

  const small = new WsWriter(1024);
  small.frame(Op.binary, bytes(10));
  const first = small.take();
  small.recycle(first);
  small.frame(Op.binary, bytes(10));
  small.take();
  small.frame(Op.binary, bytes(10));
  assert.equal(small.take().buffer, first.buffer, "the written buffer came back");
});
