import assert from "node:assert/strict";
import { check, dial, Handlers, message, WireServer } from "../../core/wire/mod.ts";
import { tickCells, type TickedCell } from "../../cell/cellapp_tick.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

// A test-only message, in a kind range the product catalog leaves free.
const Note = message<[number]>(1002, "test.note", check.tuple(check.int()), ["tool"]);

/** A cell whose tick runs `body`, with what the tick recorded of it. */
function cell(cellId: number, body: () => void) {
  const c = {
    spaceId: 1,
    cellId,
    ticks: [] as number[],
    timed: 0,
    shares: [] as number[],
    tick(dt: number) {
      c.ticks.push(dt);
      body();
    },
    stats: { record: () => void c.timed++ },
    loadMeter: { settle: (share: number) => void c.shares.push(share) },
  };
  return c;
}

Deno.test("a cellapp tick writes what its cells sent before it makes the backups, and a failing cell stops nothing", async () => {
  const notes: number[] = [];
  const log = memoryLogger();
  const server = new WireServer({
    host: "127.0.0.1",
    port: 0,
    role: "baseapp",
    handlers: new Handlers().on(Note, (_ch, n) => void notes.push(n)),
    log,
  });
  const ch = await dial(server.address, { role: "tool" });
  try {
    const seenByBackups: number[] = [];
    const sending = cell(1, () => ch.send(Note, 1));
    const failing = cell(2, () => {
      throw new Error("planted fault in cell 2");
    });
    const cells = new Map<number, TickedCell & typeof sending>([[1, sending], [2, failing]]);
    const backups = {
      tick(of: Iterable<TickedCell>) {
        seenByBackups.push(ch.buffered);
        ch.send(Note, 2 + [...of].length);
        return 0;
      },
    };
    tickCells(cells, backups, 100, log);

    assert.deepEqual(
      seenByBackups,
      [0],
      "the cells' message was handed to the socket before the backups were made (nothing of it waits in the buffer)",
    );
    await waitFor("both messages", () => notes.length === 2);
    assert.deepEqual(notes, [1, 4], "in order: the cells' message, then the backups' (which saw both cells)");
    assert.deepEqual([sending.ticks, failing.ticks], [[100], [100]]);
    assert.deepEqual([sending.timed, failing.timed], [1, 1], "each cell's tick is timed, the failed one too");
    assert.equal(sending.shares.length, 1);
    assert.equal(failing.shares.length, 1);
    await log.waitFor(/tick of cell 2 of space 1 failed: .*planted fault in cell 2/);
  } finally {
    ch.close("test over");
    await server.close();
  }
});
