/**
 * Attacks through the process ports, as the issue measured them on a local
 * cluster: a process that reaches a port (with no cluster secret, anyone on
 * the machine) may only do what its role may, and only for what it holds;
 * nonsense gets it dropped, with a log line naming it. With a secret, nothing
 * bigger than a handshake is read before the secret is proven.
 */
import assert from "node:assert/strict";
import {
  CellMsg,
  type Channel,
  type ChannelOptions,
  dial,
  Handlers,
  MgrMsg,
  MOVE_RECORD,
  ProcMsg,
  type RegisterInfo,
  WireServer,
  writeMove,
} from "../../core/wire/mod.ts";
import type { ClusterView, SpaceSummaryView } from "../../core/views.ts";
import { poseOf } from "../../core/geo/mod.ts";
import { login, startBase } from "../base/fixtures.ts";
import { cellReady, entityAt } from "../helpers/players.ts";
import { api, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";
import { playAlong } from "../helpers/fake_member.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

/** A fake member: a listener of its own (for its address) and channels it dials. */
class Fake implements Disposable {
  readonly server: WireServer;
  readonly channels: Channel[] = [];

  readonly handlers: Handlers;

  constructor(readonly role: "cellapp" | "baseapp") {
    // A cellapp that registers is given the default space, and every member hears of buddies and deaths: it plays along.
    this.handlers = playAlong(role);
    this.server = new WireServer({ host: "127.0.0.1", port: 0, role, handlers: this.handlers });
  }

  async dial(address: string, extra: Partial<ChannelOptions> = {}): Promise<Channel> {
    const ch = await dial(address, {
      role: this.role,
      address: this.server.address,
      handlers: this.handlers,
      // Honest heartbeats, so that only what a test sends on purpose gets the fake dropped.
      heartbeatPayload: () => ({ load: 0 }),
      ...extra,
    });
    this.channels.push(ch);
    return ch;
  }

  registration(over: Partial<RegisterInfo> = {}): RegisterInfo {
    return {
      role: this.role,
      pid: Deno.pid,
      address: this.server.address,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
      ...over,
    };
  }

  [Symbol.dispose](): void {
    for (const ch of this.channels) ch.close("test over");
    this.server.close();
  }
}

async function cluster(admin: string): Promise<ClusterView> {
  return (await api(admin, "/api/cluster")).body as ClusterView;
}

Deno.test("without a secret, a process that joins acts only within its role and for what it holds", opts, async () => {
  await using b = await startBase();
  const ada = await login(b.app, { name: "ada", position: { x: 0, y: 0, z: 0 } });
  await cellReady(ada);
  const cellapp = (await cluster(b.admin)).processes.find((p) => p.role === "cellapp")!;
  // The summary counts from the cellapps' load reports: once one has counted ada, it holds still.
  const live = async () =>
    ((await api(b.admin, `/api/cellapps/${cellapp.id}/cells/1`)).body as { entities: { real: boolean }[] }).entities
      .filter((e) => e.real).length;
  const npcsBefore = await waitFor("the space summary to count ada", async () => {
    const n = ((await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces[0].entities;
    return n === await live() ? n : null;
  });

  using fake = new Fake("baseapp");
  const mgr = await fake.dial(b.cluster.mgrAddress);
  await mgr.request(MgrMsg.register, fake.registration());

  // Moving another baseapp's player: the cellapp drops the liar, the player stays.
  const toCell = await fake.dial(cellapp.address);
  toCell.send(CellMsg.clientPosition, ada.player.id, [400, 0, 0], [0, 0, 0]);
  assert.match(await toCell.closed, /clientPosition for Avatar \d+, whose base is at/);
  assert.equal((await entityAt(b.admin, ada.player.id))!.position[0], 0);

  // A baseapp cannot stop a cellapp, nor spawn into its cells.
  const stopper = await fake.dial(cellapp.address);
  await assert.rejects(stopper.request(ProcMsg.stop, "bye"));
  assert.match(await stopper.closed, /unexpected message stop .* from a baseapp/);
  const spawner = await fake.dial(cellapp.address);
  spawner.send(CellMsg.spawn, { spaceId: 1, type: "NPC", count: 1000, ids: [1, 1000] });
  assert.match(await spawner.closed, /unexpected message spawn/);

  // Through the cellappmgr: a cell entity for another baseapp's base, or a space shutdown, are refused.
  await assert.rejects(
    mgr.request(MgrMsg.createCellEntity, {
      spaceId: 0,
      entityId: 1,
      type: "Avatar",
      position: [0, 0, 0],
      direction: [0, 0, 0],
      props: new Uint8Array(),
      baseAddress: b.app.address,
      hasClient: true,
    }),
  );
  assert.match(await mgr.closed, /names the base at/);
  const mgr2 = await fake.dial(b.cluster.mgrAddress);
  await mgr2.request(MgrMsg.register, fake.registration());
  mgr2.send(MgrMsg.requestShutDownSpace, 1, "mine now");
  assert.match(await mgr2.closed, /unexpected message requestShutDownSpace/);

  // Only the cellappmgr's own link may speak for it, and tools may not connect at all.
  await assert.rejects(dial(cellapp.address, { role: "cellappmgr" }), /not a cellappmgr/);
  await assert.rejects(dial(cellapp.address, { role: "tool" }), /not a tool/);

  // Nothing of that reached the world: the cellapp and its NPCs are as they were, the player is where it was.
  const after = await cluster(b.admin);
  assert.ok(after.processes.some((p) => p.id === cellapp.id && p.role === "cellapp"), "the cellapp is still there");
  const spaces = ((await api(b.admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
  assert.deepEqual(spaces.map((s) => [s.id, s.entities]), [[1, npcsBefore]]);
  assert.equal((await entityAt(b.admin, ada.player.id))!.position[0], 0);
  // Moving another baseapp's player in a batch of move records; a batch that is not whole records gets its sender dropped too.
  const batcher = await fake.dial(cellapp.address);
  writeMove(batcher.record(CellMsg.clientMoves, 0)!, ada.player.id, poseOf([400, 0, 0], [0, 0, 0]));
  assert.match(await batcher.closed, /clientPosition for Avatar \d+, whose base is at/);
  const garbler = await fake.dial(cellapp.address);
  garbler.record(CellMsg.clientMoves, 0)!.raw(new Uint8Array(MOVE_RECORD - 1));
  assert.match(await garbler.closed, /bad clientMoves: 55 bytes are not whole move records/);
  assert.equal((await entityAt(b.admin, ada.player.id))!.position[0], 0);
  ada.close();
});

Deno.test("nonsense reported to the cellappmgr gets the member dropped, naming it; ids stay unique", opts, async () => {
  await using procs = new Procs();
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
  const admin = mgr.ready.admin!;
  using fake = new Fake("cellapp");

  // A negative load to win space placement: dropped at once.
  const liar = await fake.dial(mgr.ready.address!);
  await liar.request(MgrMsg.register, fake.registration());
  assert.equal((await cluster(admin)).processes.length, 2);
  liar.send(MgrMsg.loadReport, { load: -1000, cells: [] });
  assert.match(await liar.closed, /bad loadReport: argument 0: field "load": expected a number in 0\.\.100/);
  await waitFor("the liar to be dropped", async () => (await cluster(admin)).processes.length === 1);
  await waitFor(
    "a log line naming it",
    () => mgr.stderr.some((l) => /cellapp pid \d+ 127\.0\.0\.1:\d+\].*bad loadReport/.test(l)),
  );

  // The same lie in its heartbeats.
  const beats = await fake.dial(mgr.ready.address!, { heartbeatMs: 50, heartbeatPayload: () => ({ load: -1000 }) });
  await beats.request(MgrMsg.register, fake.registration());
  assert.match(await beats.closed, /bad heartbeat report/);

  // An id high-water mark at the edge of exactness, or far past any id handed out: refused, the counter unmoved.
  const hw = await fake.dial(mgr.ready.address!);
  await assert.rejects(hw.request(MgrMsg.register, fake.registration({ entityIdHighWater: 2 ** 53 - 2 })));
  assert.match(await hw.closed, /entityIdHighWater/);
  const far = await fake.dial(mgr.ready.address!);
  await assert.rejects(far.request(MgrMsg.register, fake.registration({ entityIdHighWater: 2 ** 40 })));
  assert.match(await far.closed, /registers with entity id 1099511627776 is more than 4294967296 past/);
  const honest = await fake.dial(mgr.ready.address!);
  await honest.request(MgrMsg.register, fake.registration({ entityIdHighWater: 5000 }));
  const [start, end] = await honest.request(MgrMsg.allocateIds, 3);
  assert.deepEqual([start, end], [5001, 5004], "ids go on after the highest a process holds, exact and unique");

  // Registering as something it is not (another pid than its connection said).
  const other = await fake.dial(mgr.ready.address!);
  await assert.rejects(other.request(MgrMsg.register, fake.registration({ pid: Deno.pid + 1 })));
  assert.match(await other.closed, /registers as cellapp pid \d+ .* but connected as cellapp pid/);
  // Asking for ids before registering.
  const early = await fake.dial(mgr.ready.address!);
  await assert.rejects(early.request(MgrMsg.allocateIds, 10));
  assert.match(await early.closed, /sent allocateIds before registering/);
  assert.equal((await api(admin, "/api/health")).status, 200);
});

Deno.test("with a secret, a 16 MiB frame before the handshake costs nothing and splits nothing", opts, async () => {
  await using procs = new Procs();
  const env = { SEAMLESS_SECRET: "correct horse battery staple" };
  const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=50"], { env });
  const admin = mgr.ready.admin!;
  const cell = await procs.start(["--role=cell", "--port=0", `--mgr=${mgr.ready.address}`], { env });
  const spacesNow = async () => ((await api(admin, "/api/spaces")).body as { spaces: SpaceSummaryView[] }).spaces;
  await waitFor("the default space with its NPCs", async () => (await spacesNow())[0]?.entities === 50, 30_000);
  const before = await cluster(admin);

  const rss = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))![1]) * 1024;
  for (const target of [mgr, cell]) {
    const rssBefore = rss(target.pid);
    const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(target.ready.address!.split(":")[1]) });
    const size = 16 * 1024 * 1024;
    const frame = new Uint8Array(4 + 64 * 1024).fill(0x91); // [[[[...]]]]: each level one byte
    new DataView(frame.buffer).setUint32(0, size);
    const t0 = performance.now();
    let sent = 0;
    try {
      // The server reads the length, refuses, and closes: the rest is never wanted.
      for (; sent < size && performance.now() - t0 < 5000; sent += frame.length - 4) {
        await conn.write(sent === 0 ? frame : frame.subarray(4));
      }
    } catch {
      // reset by the server: expected
    }
    const buf = new Uint8Array(4096);
    try {
      while ((await conn.read(buf)) !== null) { /* the challenge, then the bye */ }
    } catch {
      // reset
    }
    conn.close();
    const ms = performance.now() - t0;
    assert.ok(sent < size, `the server closed before the frame was sent (${sent} of ${size} bytes sent)`);
    assert.ok(ms < 2000, `closed within ${Math.round(ms)} ms`);
    const grown = rss(target.pid) - rssBefore;
    assert.ok(grown < 16 * 1024 * 1024, `${target.ready.role} grew by ${grown} bytes`);
  }
  // Nothing was dropped and nothing exists twice.
  const after = await cluster(admin);
  assert.deepEqual(after.processes.map((p) => [p.id, p.pid]), before.processes.map((p) => [p.id, p.pid]));
  assert.deepEqual((await spacesNow()).map((s) => [s.id, s.entities]), [[1, 50]]);
  assert.ok(!mgr.stderr.some((l) => / left: /.test(l)), "no process left the cluster");
});
