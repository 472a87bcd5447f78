/**
 * Three baseapps, one killed with -9: its player's base is restored on the baseapp that held its backup. The SDK
 * tries the other live baseapp first; that one sends it to the holder without using up its single-use token, and it
 * resumes there with its entity and state (base/login/resume_route.ts).
 */
import assert from "node:assert/strict";
import { connect, type ResumeOptions } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { backupTarget, type BaseAppInfo } from "../../core/wire/mod.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellEntitiesOf, cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const secret = "--secret=resume route test";

Deno.test(
  "a client that resumes on a live baseapp not holding its restored base is sent to the one that does",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { mgrFlags: [secret], cellFlags: [secret] });
    const started = [];
    for (let i = 0; i < 3; i++) started.push(await startBaseProcess(procs, cluster, [secret], {}, true));
    const view = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
    const live: BaseAppInfo[] = view.processes.filter((p) => p.role === "baseapp").sort((a, b) => a.id - b.id)
      .map((p) => ({ id: p.id, address: p.address, clientUrl: p.clientUrl ?? null }));
    const [a, ...rest] = started;
    const aId = live.find((b) => b.clientUrl === a.clientUrl)!.id;

    // The URLs are set below, once it is known which baseapp holds ann's backup: the other is tried first.
    const resume: ResumeOptions = { withinMs: 20_000, urls: [] };
    const ann = await connect(a.clientUrl, { name: "ann", password: "ann pw" }, { registry, resume });
    assert.equal(await cellReady(ann), 1);
    const id = ann.player.id;
    const holderInfo = backupTarget(id, live, aId)!;
    const holder = rest.find((b) => b.clientUrl === holderInfo.clientUrl)!;
    const other = rest.find((b) => b !== holder)!;
    // The options are read when the connection is lost.
    resume.urls = [other.clientUrl, holder.clientUrl];
    const resumed: string[] = [];
    ann.on("resumed", (url: string) => resumed.push(url));

    for (let i = 0; i < 3; i++) ann.callCell(null, "raiseCounter");
    await waitFor("ann's counter raised", () => ann.player.props.counter === 3, 10_000);
    await waitFor("a resume token", () => ann.resumeToken);
    await waitFor(
      "the holder keeps ann's backup",
      () => holder.proc.stderr.some((l) => l.includes(`first of Avatar ${id}`)),
      10_000,
    );
    // A backup period and a half more: the latest backup carries the counter and the token.
    await new Promise((r) => setTimeout(r, 1500));
    a.proc.kill("SIGKILL");
    await a.proc.status;
    await waitFor("ann resumed", () => resumed.length > 0, 20_000);

    assert.deepEqual(resumed, [holder.clientUrl], "on the baseapp holding its restored base");
    assert.ok(
      other.proc.stderr.some((l) => l.includes(`Avatar ${id} is held by baseapp ${holderInfo.id}`)),
      "the other baseapp sent it there",
    );
    assert.ok(!other.proc.stderr.some((l) => l.includes("(resumed)")), "and took nothing itself");
    assert.equal(ann.player.id, id, "its own entity");
    await waitFor("ann's counter as it was", () => ann.player.props.counter === 3, 10_000);
    assert.equal((await cellEntitiesOf(cluster.admin, id, 1)).filter((e) => e.real).length, 1, "one cell entity");
    ann.callCell(null, "raiseCounter");
    await waitFor("ann's counter raised through the holder", () => ann.player.props.counter === 4, 10_000);
    ann.close();
  },
);
