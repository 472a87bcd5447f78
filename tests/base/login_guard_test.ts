import assert from "node:assert/strict";
import {
  addressKey,
  type Admission,
  formatWait,
  LoginGuard,
  type LoginLimits,
  type LoginTicket,
} from "../../base/login/login_guard.ts";

/** A guard on a clock the test moves. */
function guard(limits: Partial<LoginLimits> = {}): { g: LoginGuard; clock: { t: number } } {
  const clock = { t: 1_000_000 };
  return { g: new LoginGuard(limits, () => clock.t), clock };
}

function ticket(a: Admission): LoginTicket {
  assert.ok(a.ok, `expected admission, got: ${a.ok ? "" : a.reason}`);
  return a.ticket;
}

function refused(a: Admission, re: RegExp): number {
  assert.ok(!a.ok, "expected a refusal");
  assert.match(a.reason, re);
  return a.retryAfterMs;
}

/** One attempt that ends with `outcome`. */
function attempt(g: LoginGuard, remote: string, account: string, outcome: "ok" | "wrong-password"): void {
  g.settle(ticket(g.admit(remote, account)), outcome);
}

const A = "10.0.0.1:4000";

Deno.test("account back-off: free failures, then a wait that doubles per failure up to the cap", () => {
  const { g, clock } = guard({ accountMaxDelayMs: 8000 });
  for (let i = 0; i < 3; i++) attempt(g, A, "ada", "wrong-password");
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    const wait = refused(g.admit(A, "ada"), /^too many failed logins for this account; try again in \d+(\.\d)? s$/);
    waits.push(wait);
    clock.t += wait - 1;
    refused(g.admit(A, "ada"), /for this account/);
    clock.t += 1;
    attempt(g, A, "ada", "wrong-password");
  }
  assert.deepEqual(waits, [1000, 2000, 4000, 8000, 8000, 8000]);
  // Other accounts are not held back by this one's failures.
  ticket(g.admit(A, "bob"));
});

Deno.test("account back-off: a success resets it; a refused attempt costs nothing and counts no failure", () => {
  const { g, clock } = guard();
  for (let i = 0; i < 4; i++) {
    clock.t += 10_000;
    attempt(g, A, "ada", "wrong-password");
  }
  assert.equal(refused(g.admit(A, "ada"), /try again in 2 s/), 2000);
  assert.equal(refused(g.admit(A, "ada"), /try again in 2 s/), 2000, "refusals do not extend the back-off");
  clock.t += 2000;
  attempt(g, A, "ada", "ok");
  attempt(g, A, "ada", "wrong-password");
  attempt(g, A, "ada", "wrong-password");
  const t = ticket(g.admit(A, "ada"));
  assert.equal(t.suspect, true, "recent failures send the hash to the back of the queue");
  g.settle(t, "wrong-password");
  refused(g.admit(A, "ada"), /account; try again in 1 s/);
});

Deno.test("account back-off: attempts in flight count, so a burst gets no more guesses than the back-off allows", () => {
  const { g } = guard();
  const inFlight = [0, 1, 2].map(() => ticket(g.admit(A, "ada")));
  refused(g.admit("10.9.9.9:1", "ada"), /another login for this account is being checked; try again in 1 s/);
  for (const t of inFlight) g.settle(t, "wrong-password");
  refused(g.admit(A, "ada"), /too many failed logins for this account/);
  // Settling twice changes nothing.
  g.settle(inFlight[0], "ok");
  refused(g.admit(A, "ada"), /too many failed logins for this account/);
});

Deno.test("address bucket: a burst, then attempts at the refill rate", () => {
  const { g, clock } = guard({ addressBurst: 3, addressRefillPerSec: 2 });
  for (let i = 0; i < 3; i++) attempt(g, A, `u${i}`, "ok");
  assert.equal(refused(g.admit(A, "u9"), /^too many login attempts from your address; try again in 0\.5 s$/), 500);
  clock.t += 250;
  assert.equal(refused(g.admit(A, "u9"), /try again in 0\.3 s/), 250);
  clock.t += 250;
  attempt(g, A, "u9", "ok");
  refused(g.admit(A, "u9"), /from your address/);
  // Another address has its own bucket; the same host on another port does not.
  attempt(g, "10.0.0.2:4000", "u1", "ok");
  refused(g.admit("10.0.0.1:5555", "u1"), /from your address/);
  // A long pause refills to the burst, not beyond.
  clock.t += 60_000;
  for (let i = 0; i < 3; i++) attempt(g, A, `v${i}`, "ok");
  refused(g.admit(A, "v9"), /from your address/);
});

Deno.test("address back-off: failures across accounts hold back the address, not other addresses", () => {
  const { g, clock } = guard({ addressFreeFailures: 4, addressMaxDelayMs: 4000, addressBurst: 1000 });
  for (let i = 0; i < 4; i++) attempt(g, A, `victim${i}`, "wrong-password");
  assert.equal(refused(g.admit(A, "someone"), /^too many failed logins from your address; try again in 1 s$/), 1000);
  ticket(g.admit("10.0.0.2:1", "someone"));
  clock.t += 1000;
  attempt(g, A, "victim9", "wrong-password");
  assert.equal(refused(g.admit(A, "someone"), /address; try again in 2 s/), 2000);
  // A success from the address does not wash its failures out: the next failure doubles the wait again.
  clock.t += 2000;
  attempt(g, A, "mine", "ok");
  attempt(g, A, "victim8", "wrong-password");
  assert.equal(refused(g.admit(A, "someone"), /address; try again in 4 s/), 4000);
});

Deno.test("failures leak away with time", () => {
  const { g, clock } = guard({ accountFailureLeakMs: 60_000 });
  const t0 = clock.t;
  for (let i = 0; i < 5; i++) {
    attempt(g, A, "ada", "wrong-password");
    clock.t += 10_000;
  }
  clock.t = t0 + 60_000 * 2 + 30_000;
  // Five failures less two leaked: at the threshold again, and the last failure is long past.
  const t = ticket(g.admit(A, "ada"));
  g.settle(t, "wrong-password");
  assert.equal(refused(g.admit(A, "ada"), /account; try again in 2 s/), 2000);
  clock.t += 60_000 * 10;
  const clean = ticket(g.admit(A, "ada"));
  assert.equal(clean.suspect, false);
  g.settle(clean, "ok");
});

Deno.test("memory is bounded: floods of names and addresses stay within maxEntries; idle entries are swept", () => {
  const { g, clock } = guard({
    maxEntries: 100,
    sweepEveryMs: 60_000,
    addressBurst: 1_000_000,
    accountBaseDelayMs: 100_000,
    accountMaxDelayMs: 1_000_000,
  });
  for (let i = 0; i < 3; i++) attempt(g, A, "victim", "wrong-password");
  for (let i = 0; i < 20_000; i++) {
    clock.t += 1;
    const a = g.admit(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}:1`, `name${i}`);
    if (a.ok) g.settle(a.ticket, "ok");
  }
  const s = g.stats;
  assert.ok(s.addresses <= 100 && s.accounts <= 100, JSON.stringify(s));
  assert.ok(s.evicted > 0);
  // Entries without failures went first: the victim's back-off is still there.
  refused(g.admit("10.200.0.1:1", "victim"), /for this account/);
  clock.t += 3_600_000;
  g.admit("10.200.0.2:1", "x");
  assert.ok(g.stats.addresses <= 2 && g.stats.accounts <= 1, JSON.stringify(g.stats));
});

Deno.test("addresses are limited by host: ports dropped, IPv4-mapped IPv6 as IPv4, IPv6 by its /64", () => {
  assert.equal(addressKey("127.0.0.2:5000"), "127.0.0.2");
  assert.equal(addressKey("127.0.0.2"), "127.0.0.2");
  assert.equal(addressKey("[::ffff:127.0.0.2]:5000"), "127.0.0.2");
  assert.equal(addressKey("[::1]:5000"), "0:0:0:0::/64");
  assert.equal(addressKey("[2001:db8:1:2:aaaa::1]:1"), "2001:db8:1:2::/64");
  assert.equal(addressKey("[2001:0DB8:0001:0002:ffff:0:0:9]:1"), "2001:db8:1:2::/64");
  assert.equal(addressKey("[fe80::1%eth0]:1"), "fe80:0:0:0::/64");
  assert.equal(addressKey("host.example:1"), "host.example");
});

Deno.test("waits read as people read them", () => {
  assert.equal(formatWait(120), "0.2 s");
  assert.equal(formatWait(1), "0.1 s");
  assert.equal(formatWait(8000), "8 s");
  assert.equal(formatWait(7001), "7.1 s");
  assert.equal(formatWait(45_500), "46 s");
  assert.equal(formatWait(300_000), "5 min");
});

Deno.test("limits that would divide by zero or lock everyone out are refused, naming the field", () => {
  assert.throws(
    () => new LoginGuard({ addressRefillPerSec: 0 }),
    /loginLimits\.addressRefillPerSec must be more than 0/,
  );
  assert.throws(() => new LoginGuard({ addressBurst: 0.5 }), /loginLimits\.addressBurst must be at least 1/);
  assert.throws(() => new LoginGuard({ accountMaxDelayMs: NaN }), /loginLimits\.accountMaxDelayMs must be a number/);
  new LoginGuard({ accountFreeFailures: 0 });
});
