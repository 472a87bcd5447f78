/** The SDK's resume loop (client/resume.ts) and the messages and close codes that steer it. */
import assert from "node:assert/strict";
import { isLostConnection, type ResumeResult, retryResume } from "../../client/resume.ts";
import { ByteReader } from "../../core/bytes/mod.ts";
import { CloseCode, encodeServerMessage, readServerMessage, S2C } from "../../core/proto/mod.ts";

Deno.test("a resume sent elsewhere goes there next, at once; redirects in a circle end", async () => {
  const tried: string[] = [];
  const r = await retryResume({ urls: ["ws://b", "ws://c"], withinMs: 5000 }, "ws://a", (url) => {
    tried.push(url);
    return Promise.resolve<ResumeResult>(
      url === "ws://b"
        ? { ok: false, final: false, reason: "held by c", next: "ws://h" }
        : { ok: url === "ws://h" } as ResumeResult,
    );
  }, () => false);
  assert.deepEqual(r, { ok: true, url: "ws://h" });
  assert.deepEqual(tried, ["ws://b", "ws://h"], "the holder straight after, not the next in the list");

  const loop: string[] = [];
  const t0 = performance.now();
  const r2 = await retryResume({ urls: ["ws://x"], withinMs: 600 }, "ws://x", (url) => {
    loop.push(url);
    return Promise.resolve<ResumeResult>({
      ok: false,
      final: false,
      reason: "go",
      next: url === "ws://x" ? "ws://y" : "ws://x",
    });
  }, () => false);
  assert.equal(r2.ok, false);
  assert.ok(performance.now() - t0 < 3000);
  assert.ok(loop.length < 40, `${loop.length} attempts: redirects are bounded and paused between rounds`);
});

Deno.test("resumeElsewhere round-trips; a fenced baseapp's close is resumed like a lost connection", () => {
  const m = { id: S2C.resumeElsewhere, url: "ws://10.0.0.2:7100/", reason: "Avatar 7 is held by baseapp 3" } as const;
  const bytes = encodeServerMessage(m);
  const r = new ByteReader(bytes);
  assert.deepEqual(readServerMessage(r, r.u8()), m);
  assert.equal(isLostConnection(CloseCode.baseAppFenced), true);
  assert.equal(isLostConnection(CloseCode.resumeElsewhere), false, "settled by the message before it, not resumed");
  assert.equal(isLostConnection(1000), false);
});
