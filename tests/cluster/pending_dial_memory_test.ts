/**
 * What a cellapp holds for a peer while it dials it is bounded: a real cellapp, and witnesses of entities whose base
 * is at an address that accepts connections and never answers the handshake (a stalled or hostile process, or a
 * connection that reached itself: a dial to a free port of the ephemeral range now and then does), so that the dial
 * waits out the handshake timeout while every witness sends its client a frame per tick. A cellapp that kept a
 * structured clone of each such frame kept the whole 64 KiB buffer the frame is a view of: about 50 MiB a second
 * here, which the allocator kept after it was freed (docs/protocol.md, "Peers").
 */
import assert from "node:assert/strict";
import { BaseMsg, CellMsg, dial, Handlers, MAX_KIND, messageByKind, MgrMsg } from "../../core/wire/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { writeRequestUpdate } from "../../core/proto/aoi_write.ts";
import { api, isAlive, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { rssOf } from "../../tools/fuzz/mod.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** Wandering NPCs close together, each with a witness: each sees the others move, so each sends a frame per tick. */
const WITNESSES = 100;
/** The cellapp's handshake timeout (its default), and a little more. */
const DIAL_WAIT_MS = 6_000;
const MAX_GROWTH = 48 * 1024 * 1024;
/** Bytes a second of frames for the clients, at least, before the base's channel goes (hundreds of frames). */
const FLOWING_BYTES = 64 * 1024;

Deno.test(
  "a cellapp holds little for a peer that accepts its dial and never finishes the handshake",
  opts,
  async () => {
    const env = { SEAMLESS_SECRET: "dial-secret", SEAMLESS_LOG_LEVEL: "warn" };
    await using procs = new Procs();
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=0"], { env });
    const cell = await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`], { env });
    await waitFor(
      "the default space",
      async () => (await api(mgr.ready.admin!, "/api/spaces/1")).status === 200,
      30_000,
    );
    // The base's address. Nothing listens there until its channel goes; then it accepts connections and never says a
    // word.
    const reserved = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (reserved.addr as Deno.NetAddr).port;
    reserved.close();
    const base = `127.0.0.1:${port}`;
    const held: Deno.Conn[] = [];
    let silent: Deno.Listener | null = null;
    // The base's side: what a cellapp or the cellappmgr sends a baseapp is taken, the frames for its clients counted.
    let flowing = 0;
    const handlers = new Handlers();
    for (let kind = 0; kind <= MAX_KIND; kind++) {
      const def = messageByKind(kind);
      if (def && kind > 9 && (def.from.includes("cellapp") || def.from.includes("cellappmgr"))) {
        handlers.on(def, () => null);
      }
    }
    handlers.on(BaseMsg.toClients, (_ch, _generation, records) => void (flowing += records.length));
    const as = { role: "baseapp" as const, address: base, secret: env.SEAMLESS_SECRET, handlers };
    const toCell = await dial(cell.ready.address!, as);
    const toMgr = await dial(mgr.ready.address!, as);
    try {
      // A baseapp at `base` as far as the cellappmgr knows: its entities get cells there.
      await toMgr.request(MgrMsg.register, {
        role: "baseapp",
        pid: Deno.pid,
        address: base,
        previousId: null,
        clientUrl: null,
        startedAt: Date.now(),
        entityIdHighWater: 0,
      });
      const ids = Array.from({ length: WITNESSES }, (_, i) => 900_001 + i);
      await Promise.all(ids.map((id, i) =>
        toMgr.request(MgrMsg.createCellEntity, {
          spaceId: 1,
          entityId: id,
          type: "NPC",
          position: [(i % 10) * 2, 0, Math.floor(i / 10) * 2],
          direction: [0, 0, 0],
          props: new Uint8Array(0),
          baseAddress: base,
          hasClient: true,
        })
      ));
      // Their clients enable entities, and ask for the entities they were told of (a life they do not know: sent
      // whole) so that their moves follow; again as more enters come, until the frames for the clients flow (what
      // the test is about).
      for (const id of ids) toCell.send(CellMsg.enableWitness, id);
      const asks = ids.map((id) => {
        const w = new ByteWriter(4 * WITNESSES);
        for (const other of ids) if (other !== id) writeRequestUpdate(w, other, 0, []);
        return w.toBytes();
      });
      let rate = 0;
      for (let round = 0; round < 15 && rate < FLOWING_BYTES; round++) {
        ids.forEach((id, i) => toCell.send(CellMsg.clientAoi, id, asks[i]));
        const was = flowing;
        await new Promise((r) => setTimeout(r, 1000));
        rate = flowing - was;
      }
      assert.ok(rate >= FLOWING_BYTES, `frames for the clients: ${rate} bytes a second`);
      // The channel goes; the cellapp dials `base` for what it sends next, and the dial waits.
      const listener = silent = Deno.listen({ hostname: "127.0.0.1", port });
      (async () => {
        for await (const c of listener) held.push(c);
      })().catch(() => {});
      toCell.close("the base stalls");
      await waitFor("the cellapp dials the base", () => held.length > 0 || null, 5_000);
      const before = rssOf(cell.pid);
      let most = before;
      const t0 = performance.now();
      while (performance.now() - t0 < DIAL_WAIT_MS && most - before < MAX_GROWTH) {
        await new Promise((r) => setTimeout(r, 100));
        most = Math.max(most, rssOf(cell.pid));
      }
      console.log(
        `frames for the clients: ${rate} bytes a second; cellapp RSS ${before >> 20} MiB, at most ${
          most >> 20
        } MiB while its dial of the base waited`,
      );
      assert.ok(
        most - before < MAX_GROWTH,
        `while its dial of ${base} waited, the cellapp grew by ${(most - before) >> 20} MiB (from ${before >> 20} MiB)`,
      );
      assert.ok(isAlive(cell.pid), "the cellapp lives on");
    } finally {
      toMgr.close("test over");
      toCell.close("test over");
      silent?.close();
      for (const c of held) c.close();
    }
  },
);
