import assert from "node:assert/strict";
import { type Channel, dial, Handlers, message, WireServer } from "../../core/wire/mod.ts";
import { Peers } from "../../core/wire/mod.ts";
import { check } from "../../core/wire/mod.ts";
import { silentLogger } from "../../core/log.ts";
import { waitFor } from "../../testing/wait.ts";

const { int, tuple } = check;

// A kind of its own (the catalog is global), sent between cellapps as members send.
const Note = message<[number]>(1010, "test.peers.note", tuple(int()), ["cellapp"]);

/** Sends the way members do: at once on an open channel, else once the dial is through. */
function sendNote(peers: Peers, address: string, n: number): void {
  const ch = peers.peek(address);
  if (ch) ch.send(Note, n);
  else peers.get(address).then((c) => c.send(Note, n));
}

Deno.test("a channel the peer opens while our dial is pending does not let later messages overtake earlier ones", async () => {
  const notes: number[] = [];
  const handlers = new Handlers().on(Note, (_ch, n) => void notes.push(n));
  const accepted: Channel[] = [];
  using a = disposable(
    new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", onChannel: (c) => accepted.push(c) }),
  );
  using b = disposable(new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers }));
  const peers = new Peers({ role: "cellapp", address: a.server.address }, silentLogger);
  // B opened a channel to A (A has not adopted it yet); its messages from A reach B's handlers too.
  const fromB = await dial(a.server.address, { role: "cellapp", address: b.server.address, handlers });
  await waitFor("A accepts B's channel", () => accepted.length === 1 || null);
  sendNote(peers, b.server.address, 1); // no channel yet: waits for the dial
  peers.adopt(accepted[0]); // B's channel arrives while the dial is pending
  for (let n = 2; n <= 5; n++) sendNote(peers, b.server.address, n);
  await waitFor("B hears all five", () => notes.length === 5 || null);
  assert.deepEqual(notes, [1, 2, 3, 4, 5]);
  // Once the dial settled, the open channel is handed out directly again.
  await waitFor("peek gives the channel", () => peers.peek(b.server.address) ?? null);
  peers.close("test over");
  fromB.close("test over");
});

function disposable(server: WireServer) {
  return { server, [Symbol.dispose]: () => server.close() };
}
