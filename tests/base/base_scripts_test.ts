/**
 * Base scripts (docs/game.md, "Base scripts") on one baseapp in this process against a real cellappmgr and cellapp:
 * base methods called by the own client (exposed only), by the cell entity and by other bases, a base calling its cell,
 * base-only entities, the global store (checked values, KV, notifications) and writeToDB, with every bad input refused
 * by name.
 */
import assert from "node:assert/strict";
import { ErrorCode } from "../../core/proto/mod.ts";
import { decodePersistentState, PropertyContainer } from "../../core/def/mod.ts";
import { MAX_GLOBAL_VALUE_BYTES } from "../../core/base_script.ts";
import { errorsOf, login, startBase, testRegistry } from "./fixtures.ts";
import { baseScripts } from "../../entities/mod.ts";
import { GuildBase } from "../../entities/guild_base.ts";
import { cellBases } from "../../cell/base_calls.ts";
import { cellReady } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "base scripts: calls between client, cell and bases, base-only entities, globals, writeToDB",
  opts,
  async () => {
    await using b = await startBase();
    const app = b.app;
    const c = await login(app, { name: "ann", spaceId: 1, position: { x: 1, y: 0, z: 1 } });
    await cellReady(c);
    const chats: string[] = [];
    c.on("playerMethod", (name, args) => name === "onChat" && chats.push(args[1] as string));
    const errors = errorsOf(c);
    const me = app.proxies.get(c.player.id)!;
    assert.ok(me.script, "the Avatar has its base script");

    // Cell to base, awaited, and writeToDB: the reward is in the database when the cell hears the total.
    c.callCell(null, "claimReward");
    await waitFor("the cell's answer from its base", () => chats.includes("reward claimed: 10 gold"));
    const stored = await app.store.load(c.player.id);
    const base = new PropertyContainer(testRegistry.get("Avatar"), "base");
    decodePersistentState(stored!.base, base);
    assert.equal(base.get("gold"), 10, "writeToDB committed before addGold answered");

    // Base to cell, awaited: celebrate answers with the hp.
    assert.equal(await app.scripts.callCell(me, "celebrate", []), 100);
    await assert.rejects(app.scripts.callCell(me, "nope", []), /Avatar \d+ has no cell method 'nope'/);
    await assert.rejects(app.scripts.callCell(me, "celebrate", [1]), /celebrate takes 0 arguments, got 1/);

    // A client may call exposed base methods only: addGold is refused as bad input and changes nothing.
    c.callBase("addGold", 1000);
    await waitFor("the refusal", () => errors.some(([code]) => code === ErrorCode.notExposed));
    assert.match(errors.find(([code]) => code === ErrorCode.notExposed)![2], /Avatar\.addGold is not exposed/);
    assert.equal(me.props.gold, 10);

    // Base-only entities: joinGuild creates the guild through the cellappmgr, records it globally, joins it.
    c.callBase("joinGuild", "red");
    await waitFor("joined red", () => chats.includes("joined red (1 members)"), 15_000);
    const ref = app.globals.get("guild:red") as { id: number; address: string };
    const guild = app.proxies.get(ref.id)!;
    assert.equal(guild.type.name, "Guild");
    assert.deepEqual([...guild.props.members as number[]], [c.player.id]);
    assert.equal(guild.hasClient, false);
    const saved = await app.store.load(ref.id);
    assert.equal(saved?.type, "Guild", "a persistent base-only entity is written to KV");

    // Base to base by id, with every way it can go wrong named.
    assert.equal(await app.scripts.callBase(ref.id, "join", [12345]), 2);
    await assert.rejects(app.scripts.callBase(ref.id, "join", ["x"]), /Guild \d+\.join argument 0 \(member\)/);
    await assert.rejects(app.scripts.callBase(ref.id, "nope", []), /Guild \d+ has no base method 'nope'/);
    await assert.rejects(app.scripts.callBase(999_999, "join", [1]), /join on base 999999: no such base entity/);
    await assert.rejects(
      app.scripts.createBaseAnywhere("Avatar", {}),
      /Avatar is not a base-only type/,
    );
    await assert.rejects(app.scripts.createBaseAnywhere("Dragon", {}), /no entity type "Dragon"/);
    await assert.rejects(app.scripts.createBaseAnywhere("Guild", { colour: 1 }), /Guild has no base property 'colour'/);

    // The global store: checked values, notifications to scripts (the Avatar tells its client), KV.
    await app.globals.set("motd", "welcome");
    await waitFor("the motd at the client", () => chats.includes("motd: welcome"));
    const inKv = await app.kv.get<{ json: string }>(["globalData", "motd"]);
    await app.globals.flushed();
    assert.equal(JSON.parse((await app.kv.get<{ json: string }>(["globalData", "motd"])).value!.json), "welcome");
    assert.ok(inKv !== null);
    await assert.rejects(app.globals.set("big", "x".repeat(MAX_GLOBAL_VALUE_BYTES + 1)), /at most 16384 are allowed/);
    await assert.rejects(app.globals.set("when", new Date()), /a Date is not allowed/);
    await assert.rejects(app.globals.set("nan", { a: [NaN] }), /\.a: \[0\]: NaN is not a finite number/);
    await assert.rejects(app.globals.set("", 1), /a global key is a string of 1-200 characters/);
    assert.equal(app.globals.get("big"), undefined);
    const copy = app.globals.get("guild:red") as { id: number };
    copy.id = 0;
    assert.equal((app.globals.get("guild:red") as { id: number }).id, ref.id, "a read is a copy");
    await app.globals.delete("motd");
    assert.equal(app.globals.get("motd"), undefined);

    // The session survived all of it: the client is still served.
    c.callBase("say", "still here");
    await waitFor("the echo", () => chats.includes("echo: still here"));
    c.close();
  },
);

/** A guild whose join never answers, and whose leave throws: what a caller on another baseapp hears. */
class StuckGuild extends GuildBase {
  override join(_member: number): Promise<number> {
    return new Promise(() => {});
  }

  override leave(_member: number): void {
    throw new Error("the guild hall is closed");
  }
}

Deno.test(
  "base scripts: a call to a base on another baseapp times out, or rejects with the callee's error",
  opts,
  async () => {
    await using first = await startBase({ callTimeoutMs: 500 });
    await using second = await startBase({ baseScripts: { ...baseScripts, Guild: StuckGuild } }, {
      cluster: first.cluster,
    });
    const ref = await second.app.createBase("Guild", { name: "stuck" });
    assert.equal(ref.address, second.app.address);
    const started = performance.now();
    await assert.rejects(
      first.app.scripts.callBase(ref, "join", [1]),
      new RegExp(`join on base ${ref.id}: the baseapp at ${ref.address} did not answer within 500 ms`),
    );
    assert.ok(performance.now() - started < 2000);
    await assert.rejects(first.app.scripts.callBase(ref.id, "leave", [1]), /the guild hall is closed/);
    // Found by id alone (asked of every live baseapp), then remembered.
    await assert.rejects(first.app.scripts.callBase(ref.id, "join", ["one"]), /Guild \d+\.join argument 0/);

    // What cell scripts use (cell/base_calls.ts), over a real channel to the cellappmgr.
    const fromCell = cellBases({
      peer: (a) => first.app.member.peers.get(a),
      mgr: () => first.app.member.link.channel,
      timeoutMs: 2000,
    });
    const green = await fromCell.createBaseAnywhere("Guild", { name: "green" });
    const holder = [first.app, second.app].find((a) => a.address === green.address)!;
    assert.equal(holder.proxies.get(green.id)?.props.name, "green");
    await assert.rejects(fromCell.createBaseAnywhere("Guild", { name: new Date() }), /must be plain values/);
    await assert.rejects(fromCell.createBaseAnywhere("NPC", {}), /NPC is not a base-only type/);
  },
);
