/**
 * GET /metrics on a real cluster (cellappmgr, cellapp and baseapp as main.ts
 * processes, a player through the SDK): Prometheus text gathered from every
 * process, labelled with its role and id, whose figures move with what
 * happens; and a scrape that a stalled or lying process cannot stall or spoil.
 */
import assert from "node:assert/strict";
import { connect } from "../../client/mod.ts";
import { registry } from "../../entities/mod.ts";
import {
  type Channel,
  dial,
  Handlers,
  MAX_SAMPLES,
  type MetricFamily,
  MgrMsg,
  ProcMsg,
  WireServer,
} from "../../core/wire/mod.ts";
import type { ClusterView, SpaceView } from "../../core/views.ts";
import { cellReady, startBaseProcess, startCluster } from "../helpers/players.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";
import { parsePromText, type PromText, samplesOf, valueOf } from "../../testing/prom_text.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function scrape(admin: string): Promise<PromText> {
  const res = await fetch(`${admin}/metrics`);
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePromText(text);
}

Deno.test("/metrics gathers every process's figures, labelled with role and id, and they move", opts, async () => {
  await using procs = new Procs();
  const cluster = await startCluster(procs);
  // Saved each second: KV commits to count.
  const { clientUrl } = await startBaseProcess(procs, cluster, ["--autosave=1"]);
  const ids = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes;
  const cellapp = { role: "cellapp", process: String(ids.find((p) => p.role === "cellapp")!.id) };
  const baseapp = { role: "baseapp", process: String(ids.find((p) => p.role === "baseapp")!.id) };
  const mgr = { role: "cellappmgr", process: "0" };
  const cell = { ...cellapp, space: "1", cell: "1" };

  // The tick rate is measured over the last 3 s: a cell that has only just started may not have one yet.
  const first = await waitFor("the first scrape with the cell's tick rate", async () => {
    const p = await scrape(cluster.admin);
    return samplesOf(p, "seamless_cell_tick_rate", cell).some((s) => s.value > 0) ? p : null;
  }, 10_000);
  const types: Record<string, string> = {
    seamless_cell_tick_seconds: "histogram",
    seamless_cell_tick_rate: "gauge",
    seamless_cell_entities: "gauge",
    seamless_cell_ghosts: "gauge",
    seamless_cell_witnesses: "gauge",
    seamless_cell_offloads_total: "counter",
    seamless_cell_ghost_resyncs_total: "counter",
    seamless_logins_total: "counter",
    seamless_failed_logins_total: "counter",
    seamless_client_bytes_total: "counter",
    seamless_client_messages_total: "counter",
    seamless_client_bytes_per_second: "gauge",
    seamless_client_messages_per_second: "gauge",
    seamless_kv_commit_seconds: "histogram",
    seamless_process_resident_memory_bytes: "gauge",
    seamless_event_loop_delay_seconds: "gauge",
    seamless_scrape_up: "gauge",
  };
  for (const [name, type] of Object.entries(types)) assert.equal(first.types.get(name), type, name);
  for (const who of [mgr, cellapp, baseapp]) {
    assert.equal(valueOf(first, "seamless_scrape_up", who), 1, `${who.role} answered`);
    assert.ok(valueOf(first, "seamless_process_resident_memory_bytes", who) > 10e6, `${who.role} RSS`);
    assert.equal(samplesOf(first, "seamless_event_loop_delay_seconds", who).length, 3, `${who.role} loop delay`);
  }
  // Every sample says which process it came from.
  for (const s of first.samples) {
    assert.ok(["cellappmgr", "cellapp", "baseapp"].includes(s.labels.role), `${s.name}: role`);
    assert.match(s.labels.process, /^\d+$/, `${s.name}: process`);
  }
  const entities0 = valueOf(first, "seamless_cell_entities", cell);
  assert.equal(valueOf(first, "seamless_cell_ghosts", cell), 0, "one cell: no ghosts");
  assert.equal(valueOf(first, "seamless_cell_witnesses", cell), 0);
  assert.equal(valueOf(first, "seamless_cell_offloads_total", { ...cell, direction: "in" }), 0);
  assert.equal(valueOf(first, "seamless_cell_ghost_resyncs_total", cell), 0);
  assert.ok(valueOf(first, "seamless_cell_tick_rate", cell) > 0);
  assert.equal(valueOf(first, "seamless_logins_total", baseapp), 0);
  assert.equal(valueOf(first, "seamless_failed_logins_total", { ...baseapp, reason: "wrong_password" }), 0);
  const ticks0 = valueOf(first, "seamless_cell_tick_seconds_count", cell);
  assert.ok(ticks0 > 0);
  assert.equal(valueOf(first, "seamless_cell_tick_seconds_bucket", { ...cell, le: "+Inf" }), ticks0);

  const player = await connect(clientUrl, { name: "metric", password: "pw", position: { x: 5, y: 0, z: 5 } }, {
    registry,
  });
  try {
    await cellReady(player);
    await assert.rejects(connect(clientUrl, { name: "metric", password: "wrong" }, { registry }), /wrong password/);
    player.move({ x: 6, y: 0, z: 5 });
    const id = String(player.player.id);
    // The per-client rates are sampled each second: wait for the player's.
    const after = await waitFor("the player's traffic and the logins counted", async () => {
      const p = await scrape(cluster.admin);
      return samplesOf(p, "seamless_client_bytes_per_second", { ...baseapp, entity: id }).length === 2 &&
          valueOf(p, "seamless_cell_witnesses", cell) === 1 &&
          valueOf(p, "seamless_kv_commit_seconds_count", baseapp) > 0
        ? p
        : null;
    }, 15_000);
    assert.equal(valueOf(after, "seamless_logins_total", baseapp), 1);
    assert.equal(valueOf(after, "seamless_failed_logins_total", { ...baseapp, reason: "wrong_password" }), 1);
    assert.equal(valueOf(after, "seamless_failed_logins_total", { ...baseapp, reason: "throttled" }), 0);
    assert.ok(valueOf(after, "seamless_cell_tick_seconds_count", cell) > ticks0, "the tick histogram grows");
    const rates = samplesOf(after, "seamless_client_bytes_per_second", { ...baseapp, entity: id });
    assert.deepEqual(rates.map((s) => s.labels.account), ["metric", "metric"]);
    assert.deepEqual(rates.map((s) => s.labels.direction).sort(), ["in", "out"]);
    assert.ok(valueOf(after, "seamless_client_bytes_total", { ...baseapp, direction: "in" }) > 0);
    assert.ok(valueOf(after, "seamless_client_messages_total", { ...baseapp, direction: "out" }) > 0);
    assert.equal(valueOf(after, "seamless_cell_entities", cell), entities0 + 1, "the player's entity");
    assert.ok(valueOf(after, "seamless_kv_commit_seconds_sum", baseapp) > 0);
  } finally {
    player.close();
  }
});

Deno.test(
  "per-cell entities and ghosts of a two-cell space agree with what its cells report",
  opts,
  async () => {
    await using procs = new Procs();
    const cluster = await startCluster(procs, { cellapps: 2 });
    const created = await api(cluster.admin, "/api/spaces", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ bounds: [0, 0, 100, 100], cells: 2, entities: [{ type: "NPC", count: 300 }] }),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const spaceId = String((created.body as { id: number }).id);
    const space = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
    assert.equal(space.cells.length, 2);
    // NPCs near the border are ghosted across it; the figures are those the cells report to the cellappmgr.
    await waitFor("ghosts in both cells, as /metrics and /api/spaces tell", async () => {
      const p = await scrape(cluster.admin);
      const now = (await api(cluster.admin, `/api/spaces/${spaceId}`)).body as SpaceView;
      const reals = now.cells.map((c) => {
        const labels = { role: "cellapp", process: String(c.cellapp), space: spaceId, cell: String(c.id) };
        const ghosts = valueOf(p, "seamless_cell_ghosts", labels);
        const offloads = valueOf(p, "seamless_cell_offloads_total", { ...labels, direction: "in" });
        return ghosts > 0 && ghosts === c.ghosts && offloads >= c.offloadsIn
          ? valueOf(p, "seamless_cell_entities", labels)
          : NaN;
      });
      return reals[0] + reals[1] === 300;
    }, 30_000);
    // The ghosts' updates are bytes each cellapp sent the other, counted by the peer's role; none went to a baseapp.
    const p = await scrape(cluster.admin);
    assert.equal(p.types.get("seamless_peer_bytes_total"), "counter");
    for (const c of space.cells) {
      const who = { role: "cellapp", process: String(c.cellapp) };
      assert.ok(valueOf(p, "seamless_peer_bytes_total", { ...who, peer_role: "cellapp", direction: "out" }) > 0);
      assert.ok(valueOf(p, "seamless_peer_bytes_total", { ...who, peer_role: "cellapp", direction: "in" }) > 0);
      assert.equal(samplesOf(p, "seamless_peer_bytes_total", { ...who, peer_role: "baseapp" }).length, 0);
    }
  },
);

/** A fake baseapp registered with the cellappmgr, answering metrics requests with `answer`. */
async function fakeBaseApp(mgrAddress: string, answer: () => Promise<unknown>) {
  const handlers = playAlong("baseapp", new Handlers());
  handlers.on(ProcMsg.metrics, answer as () => Promise<MetricFamily[]>);
  const server = new WireServer({ host: "127.0.0.1", port: 0, role: "baseapp", handlers });
  const ch: Channel = await dial(mgrAddress, {
    role: "baseapp",
    address: server.address,
    handlers,
    heartbeatPayload: () => ({ load: 0 }),
  });
  const reg = await ch.request(MgrMsg.register, {
    role: "baseapp",
    pid: Deno.pid,
    address: server.address,
    previousId: null,
    clientUrl: null,
    startedAt: Date.now(),
    entityIdHighWater: 0,
  });
  return {
    id: String(reg.id),
    [Symbol.dispose]() {
      ch.close("test over");
      server.close();
    },
  };
}

Deno.test("a stalled or lying process is left out of the scrape, within the timeout", opts, async () => {
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
  const admin = mgr.ready.admin!;
  const address = mgr.ready.address!;
  using stalled = await fakeBaseApp(address, () => new Promise(() => {}));
  const huge = [{
    name: "flood",
    help: "",
    type: "gauge",
    values: Array.from({ length: MAX_SAMPLES + 1 }, (_, i) => ({ labels: { i }, value: 1 })),
  }];
  using flooding = await fakeBaseApp(address, () => Promise.resolve(huge));
  using spoofing = await fakeBaseApp(address, () =>
    Promise.resolve([{
      name: "seamless_logins_total",
      help: "",
      type: "counter",
      values: [{ labels: { role: "cellappmgr" }, value: 1e9 }],
    }]));
  using injecting = await fakeBaseApp(
    address,
    () => Promise.resolve([{ name: "x 1\nevil", help: "", type: "gauge", values: [] }]),
  );
  using honest = await fakeBaseApp(address, () =>
    Promise.resolve([{
      name: "fake_answers",
      help: 'Answers with \\ and "quotes"',
      type: "gauge",
      values: [{ labels: { note: 'a "quoted"\nline' }, value: 2 }],
    }]));

  const start = performance.now();
  const p = await scrape(admin);
  const ms = performance.now() - start;
  assert.ok(ms < 4000, `the scrape took ${ms} ms with a stalled process`);
  assert.equal(valueOf(p, "seamless_scrape_up", { role: "cellappmgr", process: "0" }), 1);
  for (const fake of [stalled, flooding, spoofing, injecting]) {
    assert.equal(valueOf(p, "seamless_scrape_up", { role: "baseapp", process: fake.id }), 0, `baseapp ${fake.id}`);
  }
  assert.equal(valueOf(p, "seamless_scrape_up", { role: "baseapp", process: honest.id }), 1);
  assert.equal(valueOf(p, "fake_answers", { role: "baseapp", process: honest.id, note: 'a "quoted"\nline' }), 2);
  assert.equal(samplesOf(p, "flood").length, 0);
  assert.equal(samplesOf(p, "seamless_logins_total").length, 0);
  const log = mgr.stderr.join("\n");
  assert.match(log, /metrics of baseapp \d+ .* left out of the scrape: .*more than 50000 samples/);
  assert.match(log, /metrics of baseapp \d+ .* left out of the scrape: .*label "role" is the cellappmgr's to set/);
  assert.match(log, /metrics of baseapp \d+ .* left out of the scrape: .*got no reply within 2000 ms/);
});
