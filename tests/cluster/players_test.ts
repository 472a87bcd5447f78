/**
 * Players end to end: a cellappmgr, a cellapp and a baseapp as main.ts processes, clients through the SDK
 * (client/mod.ts) with the game's definitions, and the bots' load generator.
 */
import { DenoKvDb } from "../../core/db/mod.ts";
import assert from "node:assert/strict";
import { type Client, connect, type Credentials } from "../../client/mod.ts";
import { runBots } from "../../client/bots/mod.ts";
import { registry } from "../../entities/mod.ts";
import { WITNESS_DEFAULTS } from "../../cell/witness/witness_options.ts";
import { BaseApp, EntityStore } from "../../base/mod.ts";
import { decodePersistentState, encodePersistentState, PropertyContainer } from "../../core/def/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import type { ClusterView } from "../../core/views.ts";
import {
  baseConfig,
  cellReady,
  entityAt,
  type LocalCluster,
  seen,
  startBaseProcess,
  startCluster,
  unseen,
} from "../helpers/players.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const avatar = registry.get("Avatar");
const R = WITNESS_DEFAULTS.aoiRadius;
const H = WITNESS_DEFAULTS.hysteresis;
const near = (a: number, b: number): boolean => Math.abs(a - b) < 0.05;

/**
 * A returning player in the KV file at `path`: the account "hero" (password "pw") made through a baseapp of
 * `cluster`, so that its entity id comes from the cellappmgr like any player's, then its saved state. Returns its id.
 */
async function seedHero(cluster: LocalCluster, path: string): Promise<number> {
  const seeder = await BaseApp.start(baseConfig(cluster.mgrAddress, { kv: path }), memoryLogger(), {
    registry,
    passwordIterations: 1000,
  });
  let id: number;
  try {
    const acct = await seeder.accounts.login({ name: "hero", password: "pw", remote: "test" });
    assert.ok(acct.ok);
    id = acct.entityId;
  } finally {
    await seeder.close("hero made");
  }
  using kv = await Deno.openKv(path);
  const base = new PropertyContainer(avatar, "base");
  base.set("gold", 5);
  const cell = new PropertyContainer(avatar, "cell");
  cell.set("playerName", "hero");
  cell.set("maxHp", 250);
  cell.set("level", 7);
  cell.set("inventory", [{ itemId: 5, count: 2, bound: true }]);
  await new EntityStore(new DenoKvDb(kv)).save(id, {
    type: "Avatar",
    base: encodePersistentState(base),
    cell: encodePersistentState(cell),
    position: [10, 0, 10],
    direction: [0, 0, 0],
    spaceId: 1,
  });
  return id;
}

function player(url: string, creds: Partial<Credentials> & { name: string }): Promise<Client> {
  return connect(url, { password: "pw", ...creds }, { registry });
}

/** Moves a client along x in steps the baseapp accepts, waiting for each to reach its cell. */
async function moveTo(c: Client, admin: string, x: number): Promise<void> {
  c.move({ x, y: 0, z: 0 });
  await waitFor(
    `${c.player.id} at x=${x} on its cell`,
    async () => (await entityAt(admin, c.player.id))?.position[0] === x,
  );
}

Deno.test("two players in one space see each other enter and leave at the AoI radius", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
  // The default space spans -500..500: A sits near one edge so B can go beyond the AoI square's half-side.
  const x0 = -480;
  const a = await player(clientUrl, { name: "a", position: { x: x0, y: 0, z: 0 } });
  const b = await player(clientUrl, { name: "b", position: { x: x0 + R - 10, y: 0, z: 0 } });
  await cellReady(a);
  await cellReady(b);
  const bAtA = await seen(a, b.player.id);
  await seen(b, a.player.id);
  assert.ok(near(bAtA.position.x, x0 + R - 10), `B where it is: ${bAtA.position.x}`);

  // Inside the hysteresis band (beyond the radius, within radius + hysteresis) B stays in: its changes still come.
  await moveTo(b, cluster.admin, x0 + R + H - 2);
  b.callCell(null, "raiseCounter");
  await waitFor("A to see B's counter while B is in the band", () => bAtA.props.counter === 1);
  assert.ok(a.entities.has(b.player.id) && b.entities.has(a.player.id));

  // Beyond radius + hysteresis: each leaves the other's AoI.
  await moveTo(b, cluster.admin, x0 + R + H + 10);
  await unseen(a, b.player.id);
  await unseen(b, a.player.id);

  // Back within the radius: both enter again, with what changed meanwhile.
  b.callCell(null, "raiseCounter");
  await waitFor("B's own counter 2", () => b.player.props.counter === 2);
  await moveTo(b, cluster.admin, x0 + R - 20);
  const again = await seen(a, b.player.id);
  await seen(b, a.player.id);
  assert.equal(again.props.counter, 2);
  a.close();
  b.close();
});

Deno.test("other players' properties arrive at the detail levels the definition allows", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
  const lod = avatar.lodLevels;
  assert.deepEqual(lod.map((l) => [l.label, l.distance, l.hysteresis]), [["NEAR", 30, 5], ["FAR", 150, 10]]);
  assert.equal(avatar.property("hp").detailLevel, 0, "hp: NEAR");
  assert.equal(avatar.property("level").detailLevel, 1, "level: FAR");

  const observer = await player(clientUrl, { name: "observer", position: { x: 0, y: 0, z: 0 } });
  const got: string[] = [];
  const levels: number[] = [];
  let bId = 0;
  observer.world!.on("enter", (ev) => ev.entity.id === bId && got.push(...ev.sent));
  observer.world!.on("detailLevel", (ev) => {
    if (ev.entity.id !== bId) return;
    levels.push(ev.level);
    got.push(...ev.names);
  });
  await cellReady(observer);
  const b = await player(clientUrl, { name: "far", position: { x: 100, y: 0, z: 0 } });
  bId = b.player.id;
  await cellReady(b);
  const bSeen = await seen(observer, bId);
  await waitFor("B at the FAR level", () => bSeen.detailLevel === 1);
  assert.ok(got.includes("playerName") && got.includes("counter"), `always sent: ${got}`);
  assert.ok(got.includes("level"), `FAR properties within 150 m: ${got}`);
  assert.ok(!got.includes("hp"), `no NEAR property at 100 m: ${got}`);

  // ALL_CLIENTS changes reach the observer at any level.
  b.callCell(null, "raiseCounter");
  await waitFor("the counter at 100 m", () => bSeen.props.counter === 1);
  assert.ok(!got.includes("hp"));

  // Within 30 m: the NEAR level, with hp.
  await moveTo(b, cluster.admin, 20);
  await waitFor("B at the NEAR level", () => bSeen.detailLevel === 0);
  assert.ok(got.includes("hp"), `hp sent on coming near: ${got}`);
  assert.equal(bSeen.props.hp, 100);

  // Just beyond 30 m but within its hysteresis, B stays NEAR; beyond 35 m it drops back to FAR.
  await moveTo(b, cluster.admin, 33);
  b.callCell(null, "raiseCounter");
  await waitFor("the counter at 33 m", () => bSeen.props.counter === 2);
  assert.equal(bSeen.detailLevel, 0, "within the hysteresis");
  await moveTo(b, cluster.admin, 100);
  await waitFor("B back at the FAR level", () => bSeen.detailLevel === 1);
  assert.deepEqual(levels.slice(-2), [0, 1]);
  observer.close();
  b.close();
});

Deno.test(
  "a player who logs out and in again, through a restarted baseapp, gets back every persistent property",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const dir = await Deno.makeTempDir();
    await using _cleanup = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
    const kvPath = `${dir}/players.kv`;
    const id = await seedHero(cluster, kvPath);
    const first = await startBaseProcess(procs, cluster, ["--max-speed=1000"], { SEAMLESS_KV: kvPath });

    const observer = await player(first.clientUrl, { name: "observer", position: { x: 0, y: 0, z: 10 } });
    const hero = await player(first.clientUrl, { name: "hero" });
    assert.equal(hero.player.id, id);
    assert.equal(hero.player.props.gold, 5, "base properties come with loginOk");
    await cellReady(hero);
    const seenHero = await seen(observer, id);
    assert.deepEqual([seenHero.props.playerName, seenHero.props.level], ["hero", 7], "cell properties on the cell");
    // What the player changes: a cell property (the cell uses an item), its position, and a property that is not
    // persistent (counter).
    hero.callCell(null, "useItem", 0);
    hero.callCell(null, "raiseCounter");
    await waitFor("the counter at the observer", () => seenHero.props.counter === 1);
    await moveTo(hero, cluster.admin, 12);
    await hero.logout();
    await unseen(observer, id);

    // The baseapp goes away and another one serves the same database.
    first.proc.kill("SIGTERM");
    assert.equal((await first.proc.status).code, 0);
    const second = await startBaseProcess(procs, cluster, ["--max-speed=1000"], { SEAMLESS_KV: kvPath });
    const back = await player(second.clientUrl, { name: "hero" });
    assert.equal(back.player.id, id);
    assert.equal(back.player.props.gold, 5);
    await cellReady(back);
    assert.deepEqual(back.player.position, { x: 12, y: 0, z: 0 }, "the saved position");
    const fresh = await player(second.clientUrl, { name: "fresh-eyes", position: { x: 10, y: 0, z: 0 } });
    const seenBack = await seen(fresh, id);
    assert.deepEqual(
      [seenBack.props.playerName, seenBack.props.level, seenBack.props.counter],
      ["hero", 7, 0],
      "persistent cell properties restored; counter (not persistent) from its default",
    );
    // The own-client cell properties (maxHp, inventory) went to the cell too: they come back from it at logout.
    await back.logout();
    using kv = await Deno.openKv(kvPath);
    const stored = (await new EntityStore(new DenoKvDb(kv)).load(id))!;
    const cell = new PropertyContainer(avatar, "cell");
    assert.deepEqual(decodePersistentState(stored.cell, cell), []);
    assert.deepEqual(
      [cell.get("playerName"), cell.get("maxHp"), cell.get("level"), JSON.parse(JSON.stringify(cell.get("inventory")))],
      ["hero", 250, 7, [{ itemId: 5, count: 1, bound: true }]],
    );
    const base = new PropertyContainer(avatar, "base");
    decodePersistentState(stored.base, base);
    assert.equal(base.get("gold"), 5);
    assert.deepEqual(stored.position, [12, 0, 0]);
    fresh.close();
    observer.close();
  },
);

/** The witness starts by sending the own client its own cell properties, so later nested changes apply to them. */
Deno.test({
  name: "the own client sees its own cell properties and their changes",
  ...opts,
  async fn() {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const dir = await Deno.makeTempDir();
    await using _cleanup = { [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
    const kvPath = `${dir}/players.kv`;
    const id = await seedHero(cluster, kvPath);
    const { clientUrl } = await startBaseProcess(procs, cluster, [], { SEAMLESS_KV: kvPath });
    const hero = await player(clientUrl, { name: "hero" });
    assert.equal(hero.player.id, id);
    const errors: string[] = [];
    hero.on("error", (code, message) => errors.push(`${code} ${message}`));
    await cellReady(hero);
    await waitFor("the own cell properties", () => hero.player.props.level === 7);
    assert.deepEqual(
      [hero.player.props.playerName, hero.player.props.maxHp, hero.player.props.inventory],
      ["hero", 250, [{ itemId: 5, count: 2, bound: true }]],
    );
    hero.callCell(null, "useItem", 0);
    await waitFor("the used item", () => (hero.player.props.inventory as { count: number }[])[0].count === 1);
    assert.deepEqual(errors, []);
    hero.close();
  },
});

Deno.test("bots: every bot connected, counters seen in order and without gaps", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  await startBaseProcess(procs, cluster);
  const log: string[] = [];
  const report = await runBots({
    admin: cluster.admin,
    count: 10,
    duration: 4,
    warmup: 1,
    side: 60,
    propEvery: 0.5,
    registry,
    prefix: "players-bot-",
    log: (line) => log.push(line),
  });
  const why = `${JSON.stringify(report)}\n${log.join("\n")}`;
  assert.equal(report.connected, 10, why);
  assert.equal(report.errors, 0, why);
  assert.equal(report.outOfOrder, 0, why);
  assert.equal(report.gaps, 0, why);
  assert.ok(report.propertyEvents > 0 && report.updatesPerClientPerSec > 0, `the bots saw each other: ${why}`);
  // Both members report their busy share of wall time: the baseapp's relaying counts, not only the cellapp's ticks.
  const loads = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes
    .filter((p) => p.role !== "cellappmgr").map((p) => [p.role, p.load] as const);
  assert.equal(loads.length, 2, JSON.stringify(loads));
  for (const [role, load] of loads) assert.ok(load > 0 && load < 2, `${role} reports a load of ${load}`);
});

Deno.test(
  "a player who relogs is seen afresh: the observer's cache of its old life is refreshed, not an error",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs);
    const { clientUrl } = await startBaseProcess(procs, cluster, ["--max-speed=1000"]);
    const observer = await player(clientUrl, { name: "observer", position: { x: 0, y: 0, z: 0 } });
    const errors: string[] = [];
    observer.on("error", (code, message) => errors.push(`${code} ${message}`));
    const enters: boolean[] = [];
    let heroId = 0;
    observer.world!.on("enter", (ev) => ev.entity.id === heroId && enters.push(ev.fromCache));
    const hero = await player(clientUrl, { name: "relogger", position: { x: 10, y: 0, z: 0 } });
    heroId = hero.player.id;
    await cellReady(observer);
    await cellReady(hero);
    const first = await seen(observer, heroId);
    for (let i = 0; i < 3; i++) hero.callCell(null, "raiseCounter");
    await waitFor("the observer to see the counter at 3", () => first.props.counter === 3);
    await hero.logout();
    await unseen(observer, heroId);
    assert.ok(observer.world!.cache.has(heroId), "the observer keeps its copy with its stamps");
    // The same account again: the same entity id, a new cell entity whose event numbers start again.
    const back = await player(clientUrl, { name: "relogger" });
    assert.equal(back.player.id, heroId);
    await cellReady(back);
    const again = await seen(observer, heroId);
    assert.equal(again.props.counter, 0, "the new life's counter (not persistent), not the cached 3");
    assert.deepEqual(enters, [false, false], "a copy of another life is not reused");
    back.callCell(null, "raiseCounter");
    await waitFor("the new life's changes", () => again.props.counter === 1);
    assert.deepEqual(errors, [], "the old life's stamps are no bad input");
    back.close();
    observer.close();
  },
);
