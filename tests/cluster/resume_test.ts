/**
 * Resume tokens: a client whose baseapp died takes its player back by itself, without its password, on the
 * restarted baseapp; a token works once.
 */
import assert from "node:assert/strict";
import { Client, connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import type { ClusterView } from "../../core/views.ts";
import { api, Procs } from "../../testing/procs.ts";
import { cellEntitiesOf, cellReady, startBaseProcess, startCluster, tempDir } from "../helpers/players.ts";
import { waitFor } from "../../testing/wait.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test(
  "the SDK resumes its player with its token after its baseapp is killed with -9 and restarted: same entity, one cell",
  opts,
  async () => {
    await using procs = new Procs();
    await using dir = await tempDir();
    const env = { SEAMLESS_KV: `${dir.path}/base.kv` };
    const cluster = await startCluster(procs);
    const first = await startBaseProcess(procs, cluster, [], env, true);
    const ann = await connect(first.clientUrl, { name: "ann", password: "secret pw" }, {
      registry,
      resume: { withinMs: 30_000 },
    });
    assert.equal(await cellReady(ann), 1);
    const id = ann.player.id;
    await waitFor("a resume token", () => ann.resumeToken);
    let resumed = 0;
    ann.on("resumed", () => resumed++);

    first.proc.kill("SIGKILL");
    await first.proc.status;
    // The same client port: the URL the client knows.
    const port = new URL(first.clientUrl).port;
    await startBaseProcess(procs, cluster, [`--client-port=${port}`], env, true);
    await waitFor("the client resumed", () => resumed === 1, 20_000);
    assert.equal(ann.closed, false);
    assert.equal(ann.player.id, id, "its own entity");
    assert.equal(await cellReady(ann), 1, "with its cell");
    assert.equal((await cellEntitiesOf(cluster.admin, id, 1)).length, 1, "one cell entity");
    ann.close();
  },
);

Deno.test("a resume token works once; a replayed or forged one is refused", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  const { clientUrl } = await startBaseProcess(procs, cluster, [], {}, true);
  const bob = await connect(clientUrl, { name: "bob", password: "pw" }, { registry, resume: false });
  const token = await waitFor("a resume token", () => bob.resumeToken);

  const back = await Client.resume(clientUrl, token, { registry, resume: false });
  assert.equal(back.player.id, bob.player.id, "the token takes bob's player, without a password");
  await waitFor("the first connection replaced", () => bob.closed);
  await assert.rejects(Client.resume(clientUrl, token, { registry, resume: false }), /already used/);
  const [body, sig] = token.split(".");
  const forged = `${body.slice(0, -2)}${body.endsWith("A") ? "B" : "A"}${body.slice(-1)}.${sig}`;
  await assert.rejects(Client.resume(clientUrl, forged, { registry, resume: false }), /not signed|malformed/);
  const view = (await api(cluster.admin, "/api/cluster")).body as ClusterView;
  assert.ok(view.processes.some((p) => p.role === "baseapp"));
  back.close();
});
