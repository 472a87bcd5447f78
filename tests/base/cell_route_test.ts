import assert from "node:assert/strict";
import { CellMsg, check, Handlers, message, Peers, WireServer } from "../../core/wire/mod.ts";
import { CellRoute, MAX_ROUTE_WAITING } from "../../base/cell_link/cell_route.ts";
import type { Pose } from "../../core/geo/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

// A kind of its own (the catalog is global), sent by a baseapp to a cellapp.
const Note = message<[number]>(1013, "test.route.note", check.tuple(check.int()), ["baseapp"]);

const pose = (x: number): Pose => ({ x, y: 0, z: 0, yaw: 0, pitch: 0, roll: 0 });

Deno.test("a cell route holds a bounded queue while its cellapp is unknown, a client's moves taking one place", async () => {
  const notes: number[] = [];
  const moves: number[] = [];
  const handlers = new Handlers()
    .on(Note, (_ch, n) => void notes.push(n))
    .on(CellMsg.clientPosition, (_ch, _id, position) => void moves.push(position[0]));
  const cellapp = new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers });
  const log = memoryLogger();
  const peers = new Peers({ role: "baseapp", address: "127.0.0.1:1", handshakeTimeoutMs: 300 }, log);
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of silent) held.push(c);
  })();
  try {
    const route = new CellRoute(peers, log);
    // No cellapp yet (the cell entity is being placed): everything waits.
    for (let i = 0; i < 500; i++) route.sendMove(7, pose(i));
    for (let i = 0; i < MAX_ROUTE_WAITING + 100; i++) route.send(Note, i);
    await assert.rejects(route.request(CellMsg.clientPosition, 7, [0, 0, 0], [0, 0, 0]), /has no cellapp/);
    // A cellapp that is being dialled (it takes the connection and never answers): requests are refused as well.
    route.setAddress(`127.0.0.1:${(silent.addr as Deno.NetAddr).port}`);
    await assert.rejects(route.request(CellMsg.clientPosition, 7, [0, 0, 0], [0, 0, 0]), /already wait/);
    const warned = log.lines.filter((l) => l.includes(`${MAX_ROUTE_WAITING} messages wait for the cellapp`));
    assert.equal(warned.length, 1, "said once");

    route.setAddress(cellapp.address);
    const sent = MAX_ROUTE_WAITING - 1;
    await waitFor("what waited to arrive", () => notes.length === sent);
    assert.deepEqual(notes, Array.from({ length: sent }, (_, i) => i), "in order, the ones past the bound dropped");
    assert.deepEqual(moves, [499], "only the latest of the moves that waited in a row");

    // Open: nothing waits, and sends go through again.
    route.send(Note, -1);
    await waitFor("the next one", () => notes.at(-1) === -1);
  } finally {
    peers.close("test over");
    cellapp.close();
    silent.close();
    for (const c of held) c.close();
  }
});
