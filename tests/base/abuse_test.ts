/**
 * A client's abuse beyond malformed bytes: requests the cell refuses, and a
 * move flood. Each refusal reaches the client as an error reply and counts
 * toward its abuse limit; the logs say it once; other players notice nothing.
 */
import assert from "node:assert/strict";
import { C2S, encodeClientMessage, ErrorCode } from "../../core/proto/mod.ts";
import { AOI_MSG, writeRequestUpdate } from "../../core/proto/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { makePose } from "../../core/geo/mod.ts";
import type { Client } from "../../client/mod.ts";
import { errorsOf, login, startBase, testRegistry } from "./fixtures.ts";
import { cellReady, seen, startCluster } from "../helpers/players.ts";
import { Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = testRegistry.get("Avatar");

/** Milliseconds until `observer` sees `mover` at a new x (best of a few). */
async function roundTrip(mover: Client, observer: Client, x0: number): Promise<number> {
  let best = Infinity;
  for (let i = 1; i <= 3; i++) {
    const x = x0 + i * 0.5;
    const t0 = performance.now();
    mover.move({ x, y: 0, z: 0 }, [0, 0, 0]);
    await waitFor(
      "the move seen",
      () => Math.abs((observer.entities.get(mover.player.id)?.position.x ?? -1e9) - x) < 0.05,
    );
    best = Math.min(best, performance.now() - t0);
    await new Promise((r) => setTimeout(r, 150));
  }
  return best;
}

Deno.test(
  "requests the cell refuses come back as error replies, count as abuse, and are logged once",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: ["--npcs=10"] });
    await using b = await startBase({ limits: { abuseLimit: 8 } }, { cluster });
    const bad = await login(b.app, { name: "bad", position: { x: 0, y: 0, z: 0 } });
    const errors = errorsOf(bad);
    bad.enableEntities();
    await cellReady(bad);
    const npc = await waitFor("an NPC in view", () => [...bad.entities.values()].find((e) => e.type.name === "NPC"));

    // An NPC called as if it were an Avatar: the baseapp cannot tell, the cell can.
    const useItem = avatar.method("cell", "useItem");
    const wrongType = encodeClientMessage({
      id: C2S.callCell,
      target: npc.id,
      typeId: avatar.id,
      method: useItem.index,
      args: new Uint8Array([3]),
    });
    bad.sendFrame(wrongType);
    await waitFor("the refusal", () => errors.length === 1);
    assert.deepEqual(errors[0].slice(0, 2), [ErrorCode.unknownMethod, C2S.callCell]);
    assert.match(errors[0][2], /is a NPC, not type/);

    // A cache request for an entity that is not waiting for one.
    const w = new ByteWriter(8);
    writeRequestUpdate(w, npc.id, 0, [0]);
    bad.sendFrame(w.toBytes());
    await waitFor("the second refusal", () => errors.length === 2);
    assert.deepEqual(errors[1].slice(0, 2), [ErrorCode.malformed, AOI_MSG.requestUpdate]);

    // A script that fails for the client's arguments: the sample travel to a place outside the world.
    bad.callCell(null, "travel", 1, 3e38, 0);
    await waitFor("the third refusal", () => errors.length === 3);
    assert.deepEqual(errors[2].slice(0, 2), [ErrorCode.serverError, C2S.callCell]);
    assert.match(errors[2][2], /travel failed/);

    // Each counted: a few more and the client is gone.
    const closed = new Promise<number>((r) => bad.on("close", (code) => r(code)));
    for (let i = 0; i < 8; i++) bad.sendFrame(wrongType);
    assert.equal(await closed, 1008);
    assert.equal(errors.at(-1)![0], ErrorCode.tooManyErrors);
    const cellLog = cluster.cellapps[0].stderr.filter((l) => l.includes("refused a request of the client of entity"));
    assert.equal(cellLog.length, 1, `logged once a minute per client, not per request:\n${cellLog.join("\n")}`);
  },
);

Deno.test("a move flood is dropped as abuse and cut off; another player's round trip stays normal", opts, async () => {
  await using b = await startBase({ moveRate: 10 });
  const flooder = await login(b.app, { name: "flooder", position: { x: 0, y: 0, z: 0 } });
  const mover = await login(b.app, { name: "mover", position: { x: 2, y: 0, z: 0 } });
  const observer = await login(b.app, { name: "observer", position: { x: 4, y: 0, z: 4 } });
  for (const c of [flooder, mover, observer]) await cellReady(c);
  observer.enableEntities();
  await seen(observer, mover.player.id);
  const before = await roundTrip(mover, observer, 2);

  const errors = errorsOf(flooder);
  const closed = new Promise<number>((r) => flooder.on("close", (code) => r(code)));
  // 72,000 moves in one second: frames of 2,400 tiny steps, 30 of them.
  const step = (i: number) => encodeClientMessage({ id: C2S.position, pose: makePose((i % 100) * 0.001, 0, 0) });
  const one = step(0);
  const frame = new Uint8Array(one.length * 2400);
  for (let i = 0; i < 2400; i++) frame.set(step(i), i * one.length);
  const t0 = performance.now();
  let sent = 0;
  const flood = (async () => {
    for (let k = 0; k < 30 && !flooder.closed; k++) {
      flooder.sendFrame(frame);
      sent += 2400;
      await new Promise((r) => setTimeout(r, 33));
    }
  })();
  const during = await roundTrip(mover, observer, 10);
  assert.equal(await closed, 1008, "the flooder is disconnected");
  await flood;
  const cutAfter = performance.now() - t0;
  const rateLimited = errors.filter((e) => e[0] === ErrorCode.rateLimited).length;
  assert.ok(rateLimited >= 1 && rateLimited <= 12, `${rateLimited} moves refused before the cut`);
  assert.ok(cutAfter < 1500, `cut off within ${Math.round(cutAfter)} ms, after ${sent} moves sent`);
  const accepted = b.app.proxies.get(flooder.player.id);
  assert.ok(!accepted?.hasClient, "its proxy lost the client");
  assert.ok(
    during < Math.max(250, before * 3),
    `round trip ${Math.round(during)} ms during the flood, ${Math.round(before)} before`,
  );
  for (const c of [mover, observer]) c.close();
});
