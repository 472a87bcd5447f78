import assert from "node:assert/strict";
import {
  CellMsg,
  check,
  checkMoves,
  dial,
  eachMove,
  Handlers,
  message,
  MOVE_RECORD,
  WireServer,
  writeMove,
} from "../../core/wire/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { poseOf } from "../../core/geo/mod.ts";
import { MoveQueue } from "../../cell/move_queue.ts";
import { ACTING, movesBefore } from "../../cell/cellapp.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

// Test-only messages that act on reals, in a kind range the product catalog leaves free: one about an entity, one
// about any.
const Act = message<[number]>(1003, "test.act", check.tuple(check.int()), ["baseapp"]);
const ActAll = message<[number]>(1004, "test.actAll", check.tuple(check.int()), ["baseapp"]);

/** Move records for entity ids `ids`, each at x = its id. */
function records(...ids: number[]): Uint8Array {
  const w = new ByteWriter(64);
  for (const id of ids) writeMove(w, id, poseOf([id, 0, 0], [0, 0, 0]));
  return w.bytes();
}

/** A queue that notes each move it applies as `move ID@X`, and each failure. */
function noting(log: string[], maxBytes?: number): MoveQueue {
  return new MoveQueue(
    (_from, batch) => eachMove(batch, (id, pose) => log.push(`move ${id}@${pose.x}`) > 0),
    (e) => log.push(`failed: ${(e as Error).message}`),
    maxBytes,
  );
}

Deno.test("moves read off a channel wait for the flush; a message about an entity applies its moves first", async () => {
  const log: string[] = [];
  const queue = noting(log);
  const handlers = new Handlers()
    .on(CellMsg.clientMoves, (ch, _unused, batch) => {
      assert.equal(checkMoves(batch), null);
      queue.add(ch, batch);
    })
    .on(Act, (_ch, n) => void log.push(`act ${n}`))
    .on(ActAll, (_ch, n) => void log.push(`all ${n}`));
  queue.before(handlers, [Act, ActAll] as never[], (def, args) => def.kind === Act.kind ? [args[0] as number] : null);
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers, log: memoryLogger() });
  const ch = await dial(server.address, { role: "baseapp" });
  try {
    ch.record(CellMsg.clientMoves, 0)!.raw(records(7, 8, 7));
    ch.flush();
    await waitFor("the batch to be queued", () => queue.bytes === 3 * MOVE_RECORD);
    assert.equal(log.length, 0, "nothing is applied on arrival");

    ch.record(CellMsg.clientMoves, 0)!.raw(records(9));
    ch.send(Act, 7);
    await waitFor("the message about entity 7", () => log.length === 3);
    assert.deepEqual(log, ["move 7@7", "move 7@7", "act 7"], "entity 7's moves, in order, then the message");

    ch.send(ActAll, 1);
    await waitFor("the message about any entity", () => log.length === 6);
    assert.deepEqual(log.slice(3), ["move 8@8", "move 9@9", "all 1"], "the rest, in order, and none twice");
    assert.equal(queue.bytes, 0);

    queue.add(ch, records(5));
    queue.flushEntity(6);
    assert.equal(log.length, 6, "an entity with no waiting move applies nothing");
    queue.flush();
    queue.flush();
    assert.deepEqual(log.slice(6), ["move 5@5"], "a second flush applies nothing");
  } finally {
    ch.close("test over");
    server.close();
  }
});

Deno.test("the move queue copies what it keeps, flushes itself when full, drops closed senders and survives a throw", async () => {
  const log: string[] = [];
  const server: WireServer = new WireServer({
    host: "127.0.0.1",
    port: 0,
    role: "cellapp",
    handlers: new Handlers(),
    log: memoryLogger(),
  });
  const open = await dial(server.address, { role: "baseapp" });
  const closed = await dial(server.address, { role: "baseapp" });
  try {
    // The channel reuses its read buffer: what the queue applies is what came, not what the buffer holds later.
    const queue = noting(log, 3 * MOVE_RECORD);
    const batch = records(1, 2);
    queue.add(open, batch);
    batch.fill(0);
    assert.equal(log.length, 0, "nothing is applied before the flush");
    queue.add(open, records(3, 4));
    assert.deepEqual(log, ["move 1@1", "move 2@2", "move 3@3", "move 4@4"], "past its limit the queue applies at once");
    assert.equal(queue.bytes, 0);

    closed.close("gone");
    queue.add(closed, records(5));
    queue.add(open, records(6));
    queue.flush();
    assert.deepEqual(log.slice(4), ["move 6@6"], "a batch from a channel closed since is dropped");

    const throwing = new MoveQueue(
      (_from, b) =>
        eachMove(b, (id) => {
          if (id === 10) throw new Error("planted fault at entity 10");
          log.push(`move ${id}`);
          return true;
        }),
      (e) => log.push(`failed: ${(e as Error).message}`),
    );
    throwing.add(open, records(10, 11));
    throwing.add(open, records(12));
    throwing.flush();
    assert.deepEqual(log.slice(5), ["failed: planted fault at entity 10", "move 12"]);
  } finally {
    open.close("test over");
    server.close();
  }
});

Deno.test("a move batch that is not whole valid records is refused before anything is queued", () => {
  const good = records(1, 2);
  assert.equal(checkMoves(good), null);
  assert.match(checkMoves(good.subarray(0, MOVE_RECORD + 1))!, /not whole move records/);
  const bad = records(1, 2);
  new DataView(bad.buffer, bad.byteOffset).setFloat64(MOVE_RECORD + 8, Infinity, true);
  assert.match(checkMoves(bad)!, /move record 1: a coordinate beyond/);
  const seen: number[] = [];
  eachMove(good, (id) => seen.push(id) < 1);
  assert.deepEqual(seen, [1], "the walk stops when the visitor says so");
});

Deno.test("a cellapp's acting messages about one client's entity apply that entity's moves; the rest apply all", () => {
  const about = movesBefore;
  assert.deepEqual(about(CellMsg.clientCall as never, [5, 9, 1, 2, new Uint8Array(), "b:1", 0, false]), [5, 9]);
  for (const def of [CellMsg.enableWitness, CellMsg.disableWitness, CellMsg.clientPosition]) {
    assert.deepEqual(about(def as never, [5]), [5], def.name);
  }
  for (const def of [CellMsg.destroyCellEntity, CellMsg.cellPersistentState]) {
    assert.deepEqual(about(def as never, [5]), [5], def.name);
  }
  assert.deepEqual(about(CellMsg.clientAoi as never, [5, new Uint8Array()]), [], "a client's answers read no position");
  const all = ACTING.filter((d) => movesBefore(d, [1, 2]) === null).map((d) => d.name);
  assert.ok(all.includes("offload") && all.includes("teleportIn") && all.includes("entityCall"), all.join(", "));
  assert.equal(all.length, ACTING.length - 7, "every other acting message applies all the waiting moves");
});
