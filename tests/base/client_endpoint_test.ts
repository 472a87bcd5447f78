import assert from "node:assert/strict";
import { C2S } from "../../core/proto/mod.ts";
import { Op } from "../../core/ws/frame.ts";
import { login, startBase } from "./fixtures.ts";
import { startBaseProcess, startCluster } from "../helpers/players.ts";
import { Procs } from "../../testing/procs.ts";
import { RawClient } from "../helpers/ws_frames.ts";
import { waitFor, within } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const TEN_MIB = 10 * 1024 * 1024;

/** Resident memory of a process in KiB, from /proc. */
async function rssKiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(m[1]);
}

/** The client port of a ws://HOST:PORT/ URL. */
function portOf(url: string): number {
  return Number(new URL(url).port);
}

/**
 * Announces a 10 MiB binary frame before login and then tries to send its payload, as an attacker would; resolves
 * with the close the server sent and how long after the header it came.
 */
async function announceTenMiB(port: number): Promise<{ code?: number; reason?: string; ms: number }> {
  const r = await RawClient.upgrade(port);
  try {
    const t0 = performance.now();
    await r.send(Op.binary, new Uint8Array(16), { announce: TEN_MIB });
    const closing = r.readClose(5000).then((c) => ({ ...c, ms: performance.now() - t0 }));
    // The rest of the payload, until the server stops taking it.
    const chunk = new Uint8Array(256 * 1024);
    try {
      for (let sent = 16; sent < TEN_MIB; sent += chunk.length) await r.write(chunk);
    } catch {
      // reset by the server: it does not read a refused message
    }
    return await closing;
  } finally {
    r.close();
  }
}

Deno.test("client endpoint: limits before login, big frames, slow request heads", opts, async (t) => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);

  await t.step("a frame over maxFrameBeforeLogin closes with 1009; after login the limit is maxFrame", async () => {
    await using b = await startBase({}, { cluster });
    const ws = new WebSocket(b.app.clientUrl);
    const closed = new Promise<CloseEvent>((r) => ws.onclose = r);
    await new Promise((r) => ws.onopen = r);
    ws.send(new Uint8Array(1025));
    const ev = await within("the close of the connection", closed);
    assert.deepEqual([ev.code, ev.reason], [1009, "message of 1025 bytes exceeds the limit of 1024"]);
    await waitFor("the session gone", () => b.app.sessions.size === 0);

    const c = await login(b.app, { name: "big" });
    const closeCode = new Promise<[number, string]>((r) => c.on("close", (code, reason) => r([code, reason])));
    // 2,000 one-byte messages in one frame: over the limit before login, accepted now.
    c.sendFrame(new Uint8Array(2000).fill(C2S.enableEntities));
    c.sendFrame(new Uint8Array(64 * 1024 + 1).fill(C2S.enableEntities));
    assert.deepEqual(await within("the close of the logged-in client", closeCode), [
      1009,
      "message of 65537 bytes exceeds the limit of 65536",
    ]);
  });

  const base = await startBaseProcess(procs, cluster, ["--header-timeout=500"]);
  const port = portOf(base.clientUrl);

  await t.step(
    "20 connections announcing 10 MiB frames before login are closed at once; RSS does not grow",
    async () => {
      await announceTenMiB(port); // warms the code paths up before measuring
      const before = await rssKiB(base.proc.pid);
      const results = await Promise.all(Array.from({ length: 20 }, () => announceTenMiB(port)));
      const after = await rssKiB(base.proc.pid);
      for (const r of results) {
        assert.equal(r.code, 1009, JSON.stringify(r));
        assert.equal(r.reason, `message of ${TEN_MIB} bytes exceeds the limit of 1024`);
      }
      const slowest = Math.max(...results.map((r) => r.ms));
      assert.ok(slowest < 2000, `the slowest close came ${slowest.toFixed(0)} ms after its header`);
      const grewMiB = (after - before) / 1024;
      assert.ok(grewMiB < 16, `the baseapp grew by ${grewMiB.toFixed(1)} MiB (${before} → ${after} KiB)`);
    },
  );

  await t.step("300 connections that never finish their request head are closed after --header-timeout", async () => {
    const conns: { r: RawClient; at: number }[] = [];
    try {
      for (let i = 0; i < 300; i += 50) {
        // Taken before connecting, so the server's clock for these connections cannot have started earlier.
        const at = performance.now();
        const batch = await Promise.all(Array.from({ length: 50 }, () => RawClient.open(port)));
        for (const r of batch) conns.push({ r, at });
      }
      await Promise.all(conns.map(({ r }) => r.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")));
      const ends = await Promise.all(
        conns.map(async ({ r, at }) => ({ ok: await r.ended(5000), ms: performance.now() - at })),
      );
      const open = ends.filter((e) => !e.ok).length;
      assert.equal(open, 0, `${open} of 300 connections still open after 5 s`);
      const first = Math.min(...ends.map((e) => e.ms)), last = Math.max(...ends.map((e) => e.ms));
      assert.ok(first >= 400, `one was closed after ${first.toFixed(0)} ms, before the timeout`);
      assert.ok(last < 3000, `the last was closed after ${last.toFixed(0)} ms`);
    } finally {
      for (const { r } of conns) r.close();
    }
  });
});
