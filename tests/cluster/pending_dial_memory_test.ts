/**
 * What a cellapp holds for a peer while it dials it is bounded: a real cellapp, and witnesses of entities whose base
 * is at an address that accepts connections and never answers the handshake (a stalled or hostile process, or a
 * connection that reached itself: a dial to a free port of the ephemeral range now and then does), so that the dial
 * waits out the handshake timeout while every witness sends its client a frame per tick. A cellapp that kept a
 * structured clone of each such frame kept the whole 64 KiB buffer the frame is a view of: about 60 MiB a second
 * here, which the allocator kept after it was freed (docs/protocol.md, "Peers").
 */
import assert from "node:assert/strict";
import { CellMsg, ChannelMsg, MgrMsg } from "../../core/wire/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { rssOf } from "../../tools/fuzz/mod.ts";
import { encodeFrame } from "../../tools/fuzz/wire_inputs.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { writeRequestUpdate } from "../../core/proto/aoi_write.ts";
import { batchAnswered, handshake, open, type Raw } from "../../tools/fuzz/raw_conn.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** Wandering NPCs close together, each with a witness: each sees the others move, so each sends a frame per tick. */
const WITNESSES = 100;
/** The cellapp's handshake timeout (its default), and a little more. */
const DIAL_WAIT_MS = 6_000;
const MAX_GROWTH = 48 * 1024 * 1024;

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
    // The base's address: it accepts connections and never says a word.
    const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const held: Deno.Conn[] = [];
    (async () => {
      for await (const c of silent) held.push(c);
    })().catch(() => {});
    const base = `127.0.0.1:${(silent.addr as Deno.NetAddr).port}`;
    let reqId = 10;
    const joined = async (address: string): Promise<Raw> => {
      const raw = await open(address);
      assert.ok(raw && await handshake(raw, "baseapp", base, env.SEAMLESS_SECRET), `the handshake with ${address}`);
      return raw;
    };
    try {
      // A baseapp at `base` as far as the cellappmgr knows: its entities get cells there.
      const toMgr = await joined(mgr.ready.address!);
      const register = encodeFrame([MgrMsg.register.kind, ++reqId, {
        role: "baseapp",
        pid: Deno.pid,
        address: base,
        previousId: null,
        clientUrl: null,
        startedAt: Date.now(),
        entityIdHighWater: 0,
      }]);
      assert.ok(await batchAnswered(toMgr, [register], ++reqId), `registered: ${JSON.stringify([...toMgr.byes])}`);
      const ids = Array.from({ length: WITNESSES }, (_, i) => 900_001 + i);
      const creates = ids.map((id, i) =>
        encodeFrame([MgrMsg.createCellEntity.kind, ++reqId, {
          spaceId: 1,
          entityId: id,
          type: "NPC",
          position: [(i % 10) * 2, 0, Math.floor(i / 10) * 2],
          direction: [0, 0, 0],
          props: new Uint8Array(0),
          baseAddress: base,
          hasClient: true,
        }])
      );
      assert.ok(await batchAnswered(toMgr, creates, ++reqId), `entities created: ${JSON.stringify([...toMgr.byes])}`);
      // Their clients enable entities, through a channel from `base` that then goes: the cellapp dials `base` for what
      // it sends next.
      const toCell = await joined(cell.ready.address!);
      const enables = ids.map((id) => encodeFrame([CellMsg.enableWitness.kind, 0, id]));
      assert.ok(
        await batchAnswered(toCell, enables, ++reqId),
        `witnesses enabled: ${JSON.stringify([...toCell.byes])}`,
      );
      // Each client asks for the entities it was told of (a life it does not know: sent whole), so that their moves
      // follow; a few times, as the enters come over a few ticks.
      for (let round = 0; round < 3; round++) {
        await new Promise((r) => setTimeout(r, 500));
        const asks = ids.map((id) => {
          const w = new ByteWriter(4 * WITNESSES);
          for (const other of ids) if (other !== id) writeRequestUpdate(w, other, 0, []);
          return encodeFrame([CellMsg.clientAoi.kind, 0, id, w.toBytes()]);
        });
        assert.ok(await batchAnswered(toCell, asks, ++reqId), `updates asked: ${JSON.stringify([...toCell.byes])}`);
      }
      toCell.close();
      await waitFor("the cellapp dials the base", () => held.length > 0 || null, 5_000);
      const before = rssOf(cell.pid);
      let most = before;
      const heartbeat = encodeFrame([ChannelMsg.heartbeat.kind, 0, null]);
      const t0 = performance.now();
      while (performance.now() - t0 < DIAL_WAIT_MS && most - before < MAX_GROWTH) {
        await new Promise((r) => setTimeout(r, 100));
        most = Math.max(most, rssOf(cell.pid));
        await toMgr.write(heartbeat);
      }
      toMgr.close();
      console.log(`cellapp RSS ${before >> 20} MiB, at most ${most >> 20} MiB while its dial of the base waited`);
      assert.ok(
        most - before < MAX_GROWTH,
        `while its dial of ${base} waited, the cellapp grew by ${(most - before) >> 20} MiB (from ${before >> 20} MiB)`,
      );
      // The cellapp found the base unreachable (each of its entities lost its base), and lives on.
      await waitFor(
        "the entities' base found gone",
        () => cell.stderr.some((l) => l.includes("lost its base")),
        10_000,
      );
    } finally {
      silent.close();
      for (const c of held) c.close();
    }
  },
);
