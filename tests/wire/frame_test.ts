import assert from "node:assert/strict";
import {
  DEFAULT_MSGPACK_LIMITS,
  FrameError,
  FrameReader,
  FrameWriter,
  NONE,
  READER_SIZES,
} from "../../core/wire/mod.ts";

function drain(r: FrameReader): unknown[] {
  const out: unknown[] = [];
  let f: unknown;
  while ((f = r.next()) !== NONE) out.push(f);
  return out;
}

Deno.test("frames round-trip, including when split into single bytes", () => {
  const w = new FrameWriter(16);
  const values = [
    [1, 0, "hello"],
    { a: [1, 2, 3], b: new Uint8Array([9, 8]) },
    42n,
    -(2n ** 62n),
    2n ** 64n - 1n,
    Date.now(),
    2 ** 53,
    null,
    "x".repeat(70000),
  ];
  for (const v of values) w.push(v);
  assert.equal(w.frames, values.length);
  const bytes = w.take();
  const whole = new FrameReader();
  whole.push(bytes);
  assert.deepEqual(drain(whole), values);
  const split = new FrameReader();
  const got: unknown[] = [];
  for (const b of bytes) {
    split.push(new Uint8Array([b]));
    got.push(...drain(split));
  }
  assert.deepEqual(got, values);
  assert.equal(typeof got[5], "number", "a large integer stays a number");
});

Deno.test("the length is 4 bytes big-endian before the msgpack body", () => {
  const w = new FrameWriter();
  w.push("ab");
  const bytes = w.take();
  assert.deepEqual([...bytes], [0, 0, 0, 3, 0xa2, 0x61, 0x62]);
});

Deno.test("decoded BLOBs survive later reads into the buffer", () => {
  const w = new FrameWriter();
  w.push(new Uint8Array([1, 2, 3]));
  const r = new FrameReader();
  r.push(w.take());
  const blob = r.next() as Uint8Array;
  for (let i = 0; i < 50; i++) {
    w.push(new Uint8Array(4000).fill(7));
    r.push(w.take());
    drain(r);
  }
  assert.deepEqual([...blob], [1, 2, 3]);
});

Deno.test("a frame over the limit is refused on both sides", () => {
  const w = new FrameWriter(64, 100);
  assert.throws(() => w.push(new Uint8Array(200)), FrameError);
  const r = new FrameReader(100);
  r.push(new Uint8Array([0, 0, 1, 0])); // announces 256 bytes
  assert.throws(() => r.next(), /exceeds the limit of 100/);
});

Deno.test("a body that is not msgpack raises FrameError", () => {
  const r = new FrameReader();
  r.push(new Uint8Array([0, 0, 0, 1, 0xc1])); // 0xc1 is never used in msgpack
  assert.throws(() => r.next(), FrameError);
});

Deno.test("the reader's frame limit can be lowered and raised at run time", () => {
  const w = new FrameWriter();
  w.push("x".repeat(100)); // a 102-byte body
  const frame = w.take().slice();
  const r = new FrameReader(16);
  assert.equal(r.maxFrame, 16);
  r.push(frame);
  assert.throws(() => r.next(), /frame of 102 bytes exceeds the limit of 16/);
  const raised = new FrameReader(16);
  raised.maxFrame = 4096;
  raised.push(frame);
  assert.equal(raised.next(), "x".repeat(100));
  // Lowered while a frame is half read: that frame is checked again.
  const lowered = new FrameReader();
  lowered.push(frame.subarray(0, 50));
  assert.equal(lowered.next(), NONE);
  lowered.maxFrame = 64;
  lowered.push(frame.subarray(50));
  assert.throws(() => lowered.next(), /exceeds the limit of 64/);
  for (const bad of [0, -1, 1.5, NaN, 2 ** 32]) {
    assert.throws(() => (r.maxFrame = bad), RangeError);
  }
  assert.throws(() => new FrameReader(0), RangeError);
});

Deno.test("a body beyond the msgpack limits raises FrameError naming the limit", () => {
  const deep = new Uint8Array(4 + 1000).fill(0x91);
  new DataView(deep.buffer).setUint32(0, 1000);
  deep[deep.length - 1] = 0xc0;
  const r = new FrameReader();
  r.push(deep);
  assert.throws(() => r.next(), (e: Error) => e instanceof FrameError && /maxDepth/.test(e.message));
  const trailing = new FrameReader();
  trailing.push(Uint8Array.of(0, 0, 0, 2, 0x01, 0x02));
  assert.throws(() => trailing.next(), /frame body refused: 1 trailing bytes/);
  const strict = new FrameReader(1024, { ...DEFAULT_MSGPACK_LIMITS, maxLength: 2 });
  const w = new FrameWriter();
  w.push([1, 2, 3]);
  strict.push(w.take());
  assert.throws(() => strict.next(), /exceeds maxLength \(2\)/);
});

Deno.test("a reader started small stays small while its reads leave room, and doubles to its working size when they fill it", () => {
  const r = new FrameReader(undefined, undefined, { buffer: 4096, read: 1024 });
  // Reads that take less than they are offered: the buffer is never replaced by a bigger one.
  for (let i = 0; i < 100; i++) {
    const space = r.space();
    assert.ok(space.length <= 4096, `read ${i}: offered ${space.length} bytes`);
    r.commit(10);
    r.adapt(10, space.length);
  }
  // Reads that fill all they are offered: doubling, up to the working size and no further.
  const offered: number[] = [];
  for (let i = 0; i < 12; i++) {
    const space = r.space();
    offered.push(space.length);
    r.commit(space.length);
    r.adapt(space.length, space.length);
  }
  assert.ok(Math.max(...offered) <= READER_SIZES.buffer, `offered ${offered}`);
  assert.ok(offered.at(-1)! >= READER_SIZES.read, `offered ${offered}: reached the working read size`);
});

Deno.test("a frame's buffer grows as its bytes arrive, not to the length it declares", () => {
  const w = new FrameWriter(16);
  w.push({ blob: new Uint8Array(8 * 1024 * 1024).fill(7) });
  const frame = w.take();
  // Its header and the first hundred bytes: the reader holds room for about a read, not for 8 MiB.
  const r = new FrameReader();
  r.push(frame.subarray(0, 100));
  assert.equal(r.next(), NONE);
  assert.ok(r.capacity < 1024 * 1024, `holds ${r.capacity} bytes for 100 received`);
  // The rest, in reads of 64 KiB as a socket gives them: the buffer doubles with what has come, and the frame decodes.
  let at = 100, most = r.capacity;
  while (at < frame.length) {
    const room = r.space();
    const n = Math.min(room.length, 64 * 1024, frame.length - at);
    room.set(frame.subarray(at, at + n));
    r.commit(n);
    at += n;
    const got = r.next();
    most = Math.max(most, r.capacity);
    assert.ok(r.capacity <= 2 * at + 2 * READER_SIZES.buffer, `holds ${r.capacity} bytes for ${at} received`);
    if (got !== NONE) {
      assert.equal(at, frame.length);
      assert.equal((got as { blob: Uint8Array }).blob.length, 8 * 1024 * 1024);
    }
  }
  assert.ok(most >= frame.length, "it made room for the whole frame in the end");
});

Deno.test("after one burst past the spare's size, writes go on in two buffers instead of a fresh large one each", () => {
  const w = new FrameWriter(1024);
  w.push([1, 0, new Uint8Array(6 * 1024 * 1024)]); // one large message: the buffer grows to 8 MiB
  w.recycle(w.take());
  const buffers = new Set<ArrayBufferLike>();
  let largest = 0;
  for (let i = 0; i < 20; i++) {
    w.push([1, 0, i]);
    const bytes = w.take();
    buffers.add(bytes.buffer);
    largest = Math.max(largest, bytes.buffer.byteLength);
    w.recycle(bytes);
  }
  assert.ok(buffers.size <= 2, `${buffers.size} buffers for 20 small writes`);
  assert.ok(largest <= 4 * 1024 * 1024, `the writer went on in ${largest} bytes`);
});
