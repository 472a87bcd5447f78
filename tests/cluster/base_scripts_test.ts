/**
 * Base scripts across baseapps (docs/game.md, "Base scripts"): a cellappmgr, a cellapp and two baseapps as main.ts
 * processes running the sample game, SDK clients on each. A guild (a base-only entity) made on the least loaded baseapp
 * is joined from both (one call crosses baseapps), the global store reaches every baseapp's scripts, and when the
 * guild's baseapp is killed the guild comes back from its backup on another baseapp, members and all, and is found
 * there by id.
 */
import assert from "node:assert/strict";
import { type Client, connect } from "../../client/mod.ts";
import { baseScripts, registry } from "../../entities/mod.ts";
import { BaseApp } from "../../base/mod.ts";
import { backupTarget } from "../../core/wire/mod.ts";
import { ErrorCode } from "../../core/proto/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import type { ClusterView } from "../../core/views.ts";
import { baseConfig, cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { memoryLogger } from "../../testing/log.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
/** How often a baseapp backs each of its bases up (docs/faults.md, "Bases"). */
const BACKUP_PERIOD_MS = 1000;

/** A client's chat lines and errors as they come. */
function listen(c: Client): { chats: string[]; errors: [number, string][] } {
  const out = { chats: [] as string[], errors: [] as [number, string][] };
  c.on("playerMethod", (name, args) => name === "onChat" && out.chats.push(args[1] as string));
  c.on("error", (code, message) => out.errors.push([code, message]));
  return out;
}

Deno.test("base scripts across baseapps: guilds, globals, and a guild restored from its backup", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const [one, two] = [await startBaseProcess(procs, cluster), await startBaseProcess(procs, cluster)];
  const pw = { password: "pw" };
  const a = await connect(one.clientUrl, { name: "ann", ...pw }, { registry });
  const b = await connect(two.clientUrl, { name: "bob", ...pw }, { registry });
  const [ha, hb] = [listen(a), listen(b)];
  let g: BaseApp | null = null;
  const gLog = memoryLogger();
  try {
    await cellReady(a);
    await cellReady(b);

    // A guild made anywhere, joined from both baseapps: one of the two joins is a call to another baseapp.
    a.callBase("joinGuild", "blue");
    await waitFor("ann joined blue", () => ha.chats.includes("joined blue (1 members)"), 15_000);
    b.callBase("joinGuild", "blue");
    await waitFor("bob joined blue", () => hb.chats.includes("joined blue (2 members)"), 15_000);
    const bobJoined = Date.now();

    // A baseapp in this process joins: it takes the store from the cellappmgr; what it sets reaches every client.
    g = await BaseApp.start(baseConfig(cluster.mgrAddress), gLog, {
      registry,
      baseScripts,
      passwordIterations: 1000,
    });
    await g.member.link.registered;
    await waitFor("the store at the new baseapp", () => g!.globals.get("guild:blue") !== undefined);
    const guild = g.globals.get("guild:blue") as { id: number; address: string };
    await g.globals.set("motd", "hello all");
    await waitFor("the motd at ann", () => ha.chats.includes("motd: hello all"));
    await waitFor("the motd at bob", () => hb.chats.includes("motd: hello all"));

    // An unexposed base method from a client is refused by name; the client stays served.
    a.callBase("addGold", 5);
    await waitFor("the refusal", () => ha.errors.some(([c]) => c === ErrorCode.notExposed));

    // The guild's baseapp dies: its backup holder restores the guild; the survivor's next join finds it by id.
    const [holder, survivor] = guild.address === one.proc.ready.address ? [one, hb] : [two, ha];
    const survivorClient = survivor === ha ? a : b;
    // Backups go out once a second, to the baseapp the guild's id hashes to: wait until that one holds it.
    await waitFor("the three baseapps at the new one", () => g!.backups.live.length === 3);
    const holderInfo = g.backups.live.find((x) => x.address === holder.proc.ready.address)!;
    const target = backupTarget(guild.id, g.backups.live, holderInfo.id)!;
    const held = new RegExp(`base backups held: \\d+ \\(first of Guild ${guild.id} `);
    const backupLog = () =>
      target.address === g!.address ? gLog.lines : (target.address === one.proc.ready.address ? one : two).proc.stderr;
    await waitFor("the guild's backup at its backup baseapp", () => backupLog().some((l) => held.test(l)), 10_000);
    // The backup there may still be one taken before bob joined (backups are up to a period old, docs/faults.md,
    // "Bases"), and a guild restored from it would not have him: the kill waits until one period has surely passed.
    await waitFor("a backup period since bob joined", () => Date.now() - bobJoined > 2 * BACKUP_PERIOD_MS);
    holder.proc.kill("SIGKILL");
    await waitFor("the cellappmgr to drop the dead baseapp", async () => {
      const c = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
      return !c.processes.some((p) => p.role === "baseapp" && p.clientUrl === holder.clientUrl);
    }, 20_000);
    // The guild is called only once it is back: each failed call counts against the client's error budget, and calls
    // retried as fast as they fail would have the survivor disconnected before a slow restore is done.
    const restored = new RegExp(`Guild ${guild.id} restored from its backup`);
    await waitFor("the guild restored at its backup baseapp", () => backupLog().some((l) => restored.test(l)), 20_000);
    const [chatsBefore, errorsBefore] = [survivor.chats.length, survivor.errors.length];
    survivorClient.callBase("joinGuild", "blue");
    const joins = () => survivor.chats.slice(chatsBefore).filter((c) => c.startsWith("joined blue"));
    await waitFor(
      "an answer to the survivor's join",
      () => joins().length > 0 || survivor.errors.length > errorsBefore,
    );
    // Nothing went wrong: only the refusal above; and the restored guild kept both members.
    const other = survivor.errors.filter(([c]) => c !== ErrorCode.notExposed);
    assert.deepEqual(other, []);
    assert.deepEqual(joins(), ["joined blue (2 members)"]);
  } finally {
    a.close();
    b.close();
    await g?.close("test over");
  }
});
