import assert from "node:assert/strict";
import {
  type Channel,
  dial,
  FRAME_RECORD_HEAD,
  Handlers,
  message,
  MOVE_RECORD,
  readFrames,
  readMoves,
  type RecordsDef,
  tick,
  WireServer,
  writeFrame,
  writeMove,
} from "../../core/wire/mod.ts";
import { check } from "../../core/wire/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { MAX_COORD, type Pose, poseOf } from "../../core/geo/mod.ts";
import { waitFor } from "../../testing/wait.ts";

const { bytes, int, tuple } = check;

// Test-only messages, in a kind range the product catalog leaves free.
const tool = ["tool"] as const;
const Note = message<[number]>(1010, "test.recordsNote", tuple(int()), tool);
const Rows: RecordsDef = message<[number, Uint8Array]>(1011, "test.rows", tuple(int(), bytes(1 << 20)), tool);
const Other: RecordsDef = message<[number, Uint8Array]>(1012, "test.otherRows", tuple(int(), bytes(1 << 20)), tool);

/** A server that logs what arrives, in order: "note N", "rows head: a,b,c", "other head: ...". */
function serve() {
  const seen: string[] = [];
  const rows = (name: string) => (_ch: Channel, head: number, b: Uint8Array) => {
    seen.push(`${name} ${head}: ${[...b].join(",")}`);
  };
  const handlers = new Handlers()
    .on(Note, (_ch, n) => void seen.push(`note ${n}`))
    .on(Rows, rows("rows"))
    .on(Other, rows("other"));
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "cellappmgr", handlers });
  return { server, seen, [Symbol.dispose]: () => server.close() };
}

const put = (ch: Channel, def: RecordsDef, head: number, ...values: number[]) => {
  const w = ch.record(def, head)!;
  for (const v of values) w.u8(v);
};

Deno.test("records of one turn go as one message, in order with the channel's other messages", async () => {
  using s = serve();
  const ch = await dial(s.server.address, { role: "tool" });
  try {
    tick(() => {
      ch.send(Note, 1);
      put(ch, Rows, 0, 1);
      put(ch, Rows, 0, 2, 3);
      ch.send(Note, 2); // closes the batch before it
      put(ch, Rows, 0, 4);
      put(ch, Rows, 7, 5); // another head: another message
      put(ch, Other, 7, 6); // another def: another message
      put(ch, Other, 7, 7);
    });
    await waitFor("everything", () => s.seen.length === 6);
    assert.deepEqual(s.seen, ["note 1", "rows 0: 1,2,3", "note 2", "rows 0: 4", "rows 7: 5", "other 7: 6,7"]);
    // Outside a tick, the batch leaves at the end of the turn.
    put(ch, Rows, 1, 8);
    put(ch, Rows, 1, 9);
    await waitFor("the turn's batch", () => s.seen.length === 7);
    assert.equal(s.seen[6], "rows 1: 8,9");
  } finally {
    ch.close("test over");
  }
});

Deno.test("a batch past the flush threshold leaves before the tick ends; a closed channel takes no records", async () => {
  using s = serve();
  const ch = await dial(s.server.address, { role: "tool", flushThreshold: 1024 });
  try {
    await ch.ready;
    tick(() => {
      for (let i = 0; i < 300; i++) ch.record(Rows, 0)!.raw(new Uint8Array(10).fill(i & 0xff));
      assert.ok(ch.buffered < 2000, `past the threshold records leave before the tick ends (${ch.buffered} held)`);
    });
    await waitFor("all records", () => s.seen.reduce((n, l) => n + l.split(",").length, 0) === 3000);
    ch.close("test over");
    assert.equal(ch.record(Rows, 0), null);
  } finally {
    ch.close("test over");
  }
});

Deno.test("move records: written and read back exactly; a batch with one bad record is refused whole", () => {
  const w = new ByteWriter(16);
  writeMove(w, 1, poseOf([1.5, -2, 3e3], [0.1, 0.2, -Math.PI]));
  writeMove(w, 2 ** 48, poseOf([MAX_COORD, 0, -MAX_COORD], [0, 0, 0]));
  assert.equal(w.pos, 2 * MOVE_RECORD);
  const got: number[][] = [];
  const flat = (id: number, p: Pose) => [id, p.x, p.y, p.z, p.yaw, p.pitch, p.roll];
  assert.equal(readMoves(w.bytes(), (id, p) => got.push(flat(id, p)) > 0), null);
  assert.deepEqual(got, [[1, 1.5, -2, 3e3, 0.1, 0.2, -Math.PI], [2 ** 48, MAX_COORD, 0, -MAX_COORD, 0, 0, 0]]);
  // Stopping early.
  let n = 0;
  readMoves(w.bytes(), () => ++n < 1);
  assert.equal(n, 1);
  const bad = (mutate: (v: DataView) => void) => {
    const b = w.bytes().slice();
    mutate(new DataView(b.buffer));
    let acted = 0;
    const why = readMoves(b, () => ++acted > 0);
    assert.equal(acted, 0, "nothing of a bad batch is acted on");
    return why;
  };
  assert.match(bad((v) => v.setFloat64(MOVE_RECORD + 8, NaN, true))!, /move record 1: a coordinate/);
  assert.match(bad((v) => v.setFloat64(MOVE_RECORD + 16, MAX_COORD * 2, true))!, /move record 1: a coordinate/);
  assert.match(bad((v) => v.setFloat64(0, 0, true))!, /move record 0: entity id/);
  assert.match(bad((v) => v.setFloat64(0, 1.5, true))!, /move record 0: entity id/);
  assert.match(readMoves(w.bytes().subarray(0, MOVE_RECORD + 3), () => true)!, /not whole move records/);
});

Deno.test("frame records: written and read back as views; a cut or lying batch is refused whole", () => {
  const w = new ByteWriter(8);
  writeFrame(w, 5, 0, new Uint8Array([1, 2, 3]));
  writeFrame(w, 6, 2 ** 40, new Uint8Array(0));
  writeFrame(w, 7, 3, new Uint8Array(300).fill(9));
  const got: [number, number, number[]][] = [];
  assert.equal(readFrames(w.bytes(), (id, epoch, f) => void got.push([id, epoch, [...f.subarray(0, 3)]])), null);
  assert.deepEqual(got, [[5, 0, [1, 2, 3]], [6, 2 ** 40, []], [7, 3, [9, 9, 9]]]);
  const all = w.bytes();
  let acted = 0;
  const count = () => void acted++;
  assert.match(readFrames(all.subarray(0, all.length - 1), count)!, /frame record 2 is cut short/);
  assert.match(readFrames(all.subarray(0, FRAME_RECORD_HEAD + 3 + 5), count)!, /frame record 1 is cut short/);
  const lying = all.slice();
  new DataView(lying.buffer).setUint32(16, 1 << 30, true);
  assert.match(readFrames(lying, count)!, /frame record 0 is cut short/);
  const badEpoch = all.slice();
  new DataView(badEpoch.buffer).setFloat64(8, -1, true);
  assert.match(readFrames(badEpoch, count)!, /frame record 0: bad epoch/);
  assert.equal(acted, 0, "nothing of a bad batch is acted on");
});
