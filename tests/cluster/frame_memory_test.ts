/**
 * A peer that declares large frames and sends little of them costs a process little memory: a real cellapp, and
 * connections that pass the handshake (with the cluster secret) and then send the 4-byte length of a 15 MiB frame and
 * nothing more. A reader that made room for each declared frame at once held 15 MiB per connection, and the allocator
 * kept that memory after the connections closed: 320 of them left a cellapp ~640 MiB larger (docs/protocol.md,
 * "Framing").
 */
import assert from "node:assert/strict";
import { Procs } from "../../testing/procs.ts";
import { rssOf } from "../../tools/fuzz/mod.ts";
import { handshake, open, type Raw } from "../../tools/fuzz/raw_conn.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ROUNDS = 8, CONNECTIONS = 40, DECLARED = 15 * 1024 * 1024;

Deno.test("frames declared large and never sent cost a cellapp no memory it keeps", opts, async () => {
  const env = { SEAMLESS_SECRET: "frame-secret", SEAMLESS_LOG_LEVEL: "error" };
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=0"], { env });
  const cell = await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`], { env });
  const address = cell.ready.address!;
  const joined = async (): Promise<Raw> => {
    const raw = await open(address);
    assert.ok(raw && await handshake(raw, "baseapp", "127.0.0.1:1", env.SEAMLESS_SECRET), "the handshake passes");
    return raw;
  };
  const before = rssOf(cell.pid);
  let sent = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const raws: Raw[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const raw = await joined();
      const head = new Uint8Array(4 + 10);
      new DataView(head.buffer).setUint32(0, DECLARED - i * 4099);
      assert.ok(await raw.write(head));
      raws.push(raw);
      sent++;
    }
    // One more handshake, a round trip behind every header sent: the cellapp has read them all by its end.
    (await joined()).close();
    for (const r of raws) r.close();
  }
  const grown = rssOf(cell.pid) - before;
  assert.ok(
    grown < 64 * 1024 * 1024,
    `${sent} connections that declared ${DECLARED >> 20} MiB frames left the cellapp ${grown >> 20} MiB larger`,
  );
});
