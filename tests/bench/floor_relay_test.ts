import assert from "node:assert/strict";
import { serveRelayBack, serveRelayFront } from "../../bench/lib/floor_relay.ts";

/** Opens a WebSocket client to `port`, resolving once open. */
function connect(port: number): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  ws.binaryType = "arraybuffer";
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve(ws);
    ws.onerror = (e) => reject(new Error(`cannot connect to the relay front on ${port}`, { cause: e }));
  });
}

Deno.test("the relay floor forwards each client's messages to the back and each tick's frame back to that client", async () => {
  const back = serveRelayBack(12);
  const front = await serveRelayFront(back.port);
  const a = await connect(front.port), b = await connect(front.port);
  try {
    // A client is known to the back once it has sent; only then does it get the back's frames.
    const frames: Record<string, Uint8Array[]> = { a: [], b: [] };
    a.onmessage = (e) => frames.a.push(new Uint8Array(e.data as ArrayBuffer));
    b.onmessage = (e) => frames.b.push(new Uint8Array(e.data as ArrayBuffer));
    a.send(new Uint8Array([1, 2, 3]));
    const deadline = Date.now() + 5_000;
    while (frames.a.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.ok(frames.a.length >= 2, `client a got ${frames.a.length} frames in 5 s, not one a tick`);
    assert.deepEqual([...frames.a[0]], new Array(12).fill(7));
    assert.equal(frames.b.length, 0, "client b sent nothing, so the back does not know it");
    b.send(new Uint8Array([4]));
    const seen = frames.a.length;
    while (frames.b.length < 1 && Date.now() < deadline + 5_000) await new Promise((r) => setTimeout(r, 20));
    assert.equal(frames.b.length >= 1, true, "client b got no frame after sending");
    assert.ok(frames.a.length > seen, "client a stopped getting frames");
  } finally {
    const closed = [a, b].map((ws) => new Promise((r) => ws.onclose = r));
    a.close();
    b.close();
    await Promise.all(closed);
    await front.close();
    await back.close();
  }
});
