import assert from "node:assert/strict";
import { dial } from "../../core/wire/mod.ts";
import { silentLogger } from "../../core/log.ts";

/**
 * A local port nothing listens on, from the range the kernel picks source ports from, and even: Linux gives odd
 * ports to listeners that ask for any port and tries even ones first for the source port of a connection.
 */
function freeEvenPort(): number {
  for (let tries = 0; tries < 100; tries++) {
    const any = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (any.addr as Deno.NetAddr).port;
    any.close();
    const even = port % 2 === 0 ? port : port + 1;
    try {
      Deno.listen({ hostname: "127.0.0.1", port: even }).close();
      return even;
    } catch {
      // taken: another try
    }
  }
  throw new Error("no free even local port in 100 tries");
}

Deno.test("a dial that connects to its own socket fails at once instead of waiting for a handshake", async () => {
  const port = freeEvenPort();
  const address = `127.0.0.1:${port}`;
  // Dialled again and again, a free local port is sooner or later the source port the kernel picks for the dial,
  // which then connects to itself: after some 14,000 tries on average here (the kernel walks the range in random
  // steps of two or more), so the test tries for up to 25 s.
  let slowest = 0, reachedItself = 0, tries = 0;
  const until = performance.now() + 25_000;
  while (performance.now() < until && reachedItself === 0) {
    tries++;
    const t0 = performance.now();
    const err = await dial(address, { role: "cellapp", log: silentLogger, handshakeTimeoutMs: 3000 }).then(
      (ch) => {
        ch.close("test");
        return new Error("a channel opened");
      },
      (e: Error) => e,
    );
    slowest = Math.max(slowest, performance.now() - t0);
    if (/reached itself/.test(err.message)) reachedItself++;
    else assert.match(err.message, /refused/i, `try ${tries}: ${err.message}`);
  }
  assert.equal(reachedItself, 1, `no dial of ${tries} to ${address} reached itself`);
  assert.ok(slowest < 1000, `the slowest dial took ${slowest.toFixed(0)} ms`);
});
