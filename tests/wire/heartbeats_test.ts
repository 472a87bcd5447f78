import assert from "node:assert/strict";
import { HeartbeatClock } from "../../core/wire/mod.ts";
import { waitFor } from "../../testing/wait.ts";

Deno.test("channels of one heartbeat period beat together, on the period's wall-clock multiples", async () => {
  const clock = new HeartbeatClock();
  const at: number[][] = [[], []];
  const leaveA = clock.join(40, () => at[0].push(performance.timeOrigin + performance.now()));
  const leaveB = clock.join(40, () => at[1].push(performance.timeOrigin + performance.now()));
  try {
    await waitFor("three beats of each", () => at[0].length >= 3 && at[1].length >= 3);
    // One timer for both: each beat of one comes with a beat of the other, at about a multiple of 40 ms.
    for (let i = 0; i < 3; i++) {
      assert.ok(Math.abs(at[0][i] - at[1][i]) < 1, `beat ${i} of both at once`);
      const off = Math.min(at[0][i] % 40, 40 - at[0][i] % 40);
      assert.ok(off < 15, `beat ${i} ${off} ms off a multiple of 40 ms`);
    }
    leaveA();
    const a = at[0].length, b = at[1].length;
    await waitFor("two more beats of the other", () => at[1].length >= b + 2);
    assert.equal(at[0].length, a, "a channel that left beats no more");
  } finally {
    leaveA();
    leaveB(); // the last to leave stops the timer (the test's sanitizer checks none is left)
  }
});
