/**
 * A password-guessing flood against a real cluster (cellappmgr, cellapp and baseapp processes, default login limits
 * and 100,000 PBKDF2 iterations): 1,000 wrong passwords for one account at about 200 a second from 127.0.0.2, while a
 * player logs in from 127.0.0.1. The flood must all be refused, run only the hashes the back-off allows, and neither
 * slow the player's login nor the cellapp's tick.
 */
import assert from "node:assert/strict";
import { connect, type Credentials } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import { C2S, encodeClientMessage, S2C } from "../../core/proto/mod.ts";
import type { SpaceView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { startBaseProcess, startCluster } from "../helpers/players.ts";
import { rawLogin, type RawLoginResult, RawWebSocket } from "../helpers/raw_ws.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const ATTACKER = "127.0.0.2";
const FLOOD = 1000;
const FLOOD_PER_SEC = 200;
/** Flood connections open at once at most; beyond that the flood slows down rather than pile up. */
const FLOOD_IN_FLIGHT = 64;

/** Milliseconds an SDK login from 127.0.0.1 takes until loginOk; the client is closed right after. */
async function timedLogin(url: string, creds: Credentials): Promise<number> {
  const t0 = performance.now();
  const c = await connect(url, creds, { registry, enableEntities: false, timeoutMs: 15_000 });
  const ms = performance.now() - t0;
  c.close();
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function tickRates(admin: string): Promise<number[]> {
  const r = await api(admin, "/api/spaces/1");
  return r.status === 200 ? (r.body as SpaceView).cells.map((c) => c.tickRate) : [];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test(
  "the raw WebSocket client connects from the address asked for and speaks the client protocol",
  opts,
  async () => {
    const seen: { from: string; bytes: Uint8Array }[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req, info) => {
      const from = info.remoteAddr.hostname;
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.binaryType = "arraybuffer";
      socket.onmessage = (ev) => {
        seen.push({ from, bytes: new Uint8Array(ev.data) });
        socket.send(new Uint8Array([S2C.loginFailed, 3, 0x6e, 0x6f, 0x21]));
      };
      return response;
    });
    try {
      const url = `ws://127.0.0.1:${server.addr.port}/`;
      const r = await rawLogin(url, { name: "ada", password: "pw" }, { localAddress: ATTACKER });
      assert.deepEqual(r.reply, { id: S2C.loginFailed, reason: "no!" });
      assert.equal(r.from, ATTACKER);
      assert.deepEqual(seen.map((s) => s.from), [ATTACKER]);
      const sent = encodeClientMessage({ id: C2S.login, name: "ada", password: "pw", spaceId: null, position: null });
      assert.deepEqual(seen[0].bytes, sent);
      // A payload past 125 bytes takes the 16-bit length form.
      const ws = await RawWebSocket.connect(url);
      ws.send(new Uint8Array(300).fill(7));
      assert.equal((await ws.next())?.opcode, 2);
      ws.destroy();
      assert.deepEqual(seen[1].bytes, new Uint8Array(300).fill(7));
      assert.equal(seen[1].from, "127.0.0.1");
    } finally {
      await server.shutdown();
    }
  },
);

Deno.test("login flood: 1,000 wrong passwords at 200/s delay neither a valid login nor the tick", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { clientUrl } = await startBaseProcess(procs, cluster);
  const players = Array.from({ length: 11 }, (_, i) => ({ name: `flood-player-${i}`, password: `pw-${i}` }));
  // The accounts exist before anything is timed: creation is not what is measured.
  for (const p of [{ name: "flood-victim", password: "the-real-one" }, ...players]) await timedLogin(clientUrl, p);
  const raw = await rawLogin(clientUrl, players[10], { localAddress: ATTACKER });
  assert.equal(raw.reply?.id, S2C.loginOk, `the raw client logs in: ${JSON.stringify(raw)}`);

  // Without the flood, once the cellapp has reported a full window of ticks.
  await waitFor("the cellapp's tick rate", async () => (await tickRates(cluster.admin))[0] >= 9, 20_000, 200);
  const quietRates: number[] = [];
  const quiet: number[] = [];
  for (const p of players.slice(0, 5)) {
    quietRates.push(...await tickRates(cluster.admin));
    quiet.push(await timedLogin(clientUrl, p));
  }

  // The flood, paced from its start so that a slow reply does not slow it down (up to FLOOD_IN_FLIGHT open).
  const results: (RawLoginResult | Error)[] = [];
  const inFlight = new Set<Promise<void>>();
  const t0 = performance.now();
  let floodDone = false;
  const flood = (async () => {
    for (let i = 0; i < FLOOD; i++) {
      const due = t0 + (i * 1000) / FLOOD_PER_SEC;
      if (due > performance.now()) await sleep(due - performance.now());
      while (inFlight.size >= FLOOD_IN_FLIGHT) await Promise.race(inFlight);
      const p: Promise<void> = rawLogin(clientUrl, { name: "flood-victim", password: `guess-${i}` }, {
        localAddress: ATTACKER,
        timeoutMs: 10_000,
      }).then((r) => void results.push(r), (e) => void results.push(e as Error)).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
    floodDone = true;
  })();
  const floodRates: number[] = [];
  const sampler = (async () => {
    while (!floodDone) {
      floodRates.push(...await tickRates(cluster.admin));
      await sleep(500);
    }
  })();
  const during: number[] = [];
  await sleep(300);
  for (const p of players.slice(5, 10)) {
    during.push(await timedLogin(clientUrl, p));
    await sleep(600);
  }
  const playersDoneAt = performance.now() - t0;
  await flood;
  await sampler;
  const floodSeconds = (performance.now() - t0) / 1000;

  // From the player's own address now: the attacked account is still backing off (the flood kept extending it),
  // while an unrelated account logs in at once.
  const again = connect(clientUrl, { name: "flood-victim", password: "wrong-again" }, { registry, timeoutMs: 5000 });
  const victimRefusal = await again.then(() => "logged in!", (e) => (e as Error).message);
  const bystander = await timedLogin(clientUrl, players[0]);

  // The cellapp reports its rate over the last seconds: one more look covers the end of the flood.
  await sleep(1000);
  floodRates.push(...await tickRates(cluster.admin));

  const errors = results.filter((r): r is Error => r instanceof Error);
  const replies = results.filter((r): r is RawLoginResult => !(r instanceof Error));
  const reasons = new Map<string, number>();
  for (const r of replies) {
    const why = r.reply?.id === S2C.loginFailed
      ? r.reply.reason.replace(/in [\d.]+ (s|min)$/, "in N $1")
      : `${r.reply ? `message ${r.reply.id}` : `closed ${r.closeCode}`}`;
    reasons.set(why, (reasons.get(why) ?? 0) + 1);
  }
  const hashed = reasons.get("wrong password") ?? 0;
  const summary = {
    quietMs: quiet.map(Math.round),
    floodMs: during.map(Math.round),
    playersDoneAtMs: Math.round(playersDoneAt),
    floodSeconds: +floodSeconds.toFixed(2),
    floodPerSec: Math.round(FLOOD / floodSeconds),
    quietRates,
    floodRates,
    hashed,
    victimRefusal,
    bystanderMs: Math.round(bystander),
    reasons: Object.fromEntries(reasons),
    errors: errors.slice(0, 3).map((e) => e.message),
  };
  console.log(`login flood: ${JSON.stringify(summary)}`);
  const why = JSON.stringify(summary);

  assert.equal(errors.length, 0, `every flood attempt got an answer: ${why}`);
  assert.equal(replies.length, FLOOD);
  assert.ok(replies.every((r) => r.from === ATTACKER));
  assert.ok(replies.every((r) => r.reply?.id === S2C.loginFailed), `every flood attempt was refused: ${why}`);
  assert.ok(hashed >= 3 && hashed <= 8, `only the guesses the back-off allows are hashed: ${why}`);
  assert.ok(floodSeconds < 8, `the flood ran at about ${FLOOD_PER_SEC}/s: ${why}`);
  assert.ok(playersDoneAt < floodSeconds * 1000, `the timed logins ran during the flood: ${why}`);
  // ~100 ms is the budget; 50 more for two shared cores.
  assert.ok(median(during) <= median(quiet) + 150, `a valid login is not held up by the flood: ${why}`);
  assert.ok(Math.max(...during) <= Math.max(...quiet) + 250, `no valid login is held up much: ${why}`);
  const normal = Math.min(...quietRates);
  assert.ok(normal >= 8, `the cellapp ticks normally before the flood: ${why}`);
  assert.ok(floodRates.length >= 5 && Math.min(...floodRates) >= normal * 0.9, `the tick keeps its rate: ${why}`);
  assert.match(victimRefusal, /^login refused: too many failed logins for this account; try again in \d+(\.\d)? s$/);
  assert.ok(bystander <= median(quiet) + 150, `a login from 127.0.0.1 right after the flood: ${why}`);
});
