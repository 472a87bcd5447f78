import assert from "node:assert/strict";
import { type Channel, dial, Handlers, message, WireServer } from "../../core/wire/mod.ts";
import { Peers } from "../../core/wire/mod.ts";
import { check } from "../../core/wire/mod.ts";
import { DialBacklogs } from "../../core/wire/dial_backlog.ts";
import { type Logger, silentLogger } from "../../core/log.ts";
import { waitFor } from "../../testing/wait.ts";

const { bytes, int, tuple } = check;

// A kind of its own (the catalog is global), sent between cellapps as members send.
const Note = message<[number]>(1010, "test.peers.note", tuple(int()), ["cellapp"]);
const Blob = message<[Uint8Array]>(1011, "test.peers.blob", tuple(bytes()), ["cellapp"]);

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

Deno.test("what waits for a peer that accepts the dial and never finishes the handshake is small and bounded", async () => {
  const warnings: string[] = [];
  const log: Logger = { ...silentLogger, warn: (m) => void warnings.push(m) };
  // Accepts and never says a word: the dial waits out the handshake timeout.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of silent) held.push(c);
  })().catch(() => {});
  const address = `127.0.0.1:${(silent.addr as Deno.NetAddr).port}`;
  const peers = new Peers(
    { role: "cellapp", address: "127.0.0.1:1", handshakeTimeoutMs: 300 },
    log,
    new DialBacklogs(log, 2000, 8000),
  );
  // Views of one 64 KiB buffer, as a witness's frames are of its arena: what waits holds their bytes alone.
  const arena = new Uint8Array(64 * 1024).fill(7);
  let lost = 0;
  for (let i = 0; i < 100; i++) peers.send(address, Blob, [arena.subarray(i * 100, i * 100 + 100)], () => lost++);
  const waiting = peers.backlogs.bytes;
  assert.ok(waiting > 1500 && waiting <= 2000, `${waiting} bytes wait, within the bound of 2000`);
  assert.equal(warnings.filter((l) => l.startsWith(`dropping messages to ${address}`)).length, 1, warnings.join("\n"));
  // The dial fails at the handshake timeout: what waited is lost, the room given back, the drops counted.
  await waitFor("the dial fails", () => peers.backlogs.bytes === 0 && lost > 0 || null, 5000);
  assert.ok(lost > 10 && lost < 20, `${lost} messages waited, then were lost with the dial`);
  assert.ok(
    warnings.some((l) => l.startsWith(`${100 - lost} messages`) && l.includes(address)),
    warnings.join("\n"),
  );
  peers.close("test over");
  silent.close();
  for (const c of held) c.close();
});

Deno.test("what waited for a dial arrives in order, and a channel that opened after drops is closed", async () => {
  const notes: number[] = [];
  const handlers = new Handlers().on(Note, (_ch, n) => void notes.push(n));
  const accepted: Channel[] = [];
  using b = disposable(
    new WireServer({ host: "127.0.0.1", port: 0, role: "cellapp", handlers, onChannel: (c) => accepted.push(c) }),
  );
  const peers = new Peers(
    { role: "cellapp", address: "127.0.0.1:1" },
    silentLogger,
    new DialBacklogs(silentLogger, 100),
  );
  for (let n = 1; n <= 100; n++) peers.send(b.server.address, Note, [n]);
  await waitFor("B accepts the channel", () => accepted.length === 1 || null);
  const reason = await accepted[0].closed;
  assert.match(reason, /messages to it were dropped while its channel was dialled/);
  assert.ok(notes.length > 5 && notes.length < 100, `${notes.length} notes arrived`);
  assert.deepEqual(notes, notes.map((_, i) => i + 1), "the first ones, in order");
  peers.close("test over");
});

Deno.test("with outgoing checks on, a message that fails its check is refused whether or not the channel is open", () => {
  const peers = new Peers({ role: "cellapp", address: "127.0.0.1:1", checkOutgoing: true }, silentLogger);
  assert.throws(
    () => peers.send("127.0.0.1:9", Note, ["not a number" as unknown as number]),
    /not sending test\.peers\.note to 127\.0\.0\.1:9/,
  );
  assert.equal(peers.backlogs.bytes, 0, "nothing waits for it");
  peers.close("test over");
});

function disposable(server: WireServer) {
  return { server, [Symbol.dispose]: () => server.close() };
}
