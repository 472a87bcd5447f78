/**
 * The load generator behind `deno task bots`: finds baseapps through the
 * admin API, logs N bots in at random points of a square, walks them
 * randomly, has each raise its avatar's counter by 1 every few seconds, and
 * after a warm-up measures what the clients see.
 */
import { errorText } from "../../core/errors.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import { ByteWriter } from "../../core/bytes/mod.ts";
import { C2S, type ClientMessage, writeClientMessage } from "../../core/proto/mod.ts";
import { type Client, connect } from "../client.ts";
import { makePose } from "../../core/geo/mod.ts";
import { MoveClock, Walker } from "./bot_walk.ts";
import { type BotTotals, LatencyHistogram, MoveLog, Observer } from "./bot_stats.ts";

/** What to run. */
export interface BotOptions {
  /** Admin API base URL, e.g. http://127.0.0.1:8080 */
  admin: string;
  /** The cellappmgr's admin token, sent as a bearer token (a cellappmgr bound off loopback wants one). */
  adminToken?: string;
  count: number;
  /** Seconds measured after the warm-up. */
  duration: number;
  /**
   * The space to enter (default 1, the default space) at a random point of
   * the square: asked for at login, granted by baseapps with
   * `--client-spawn`; elsewhere a bot walks from where the server put it.
   */
  space?: number;
  /** Side of the spawn and walk square in metres, centred on the space (default: the space's bounds). */
  side?: number;
  /** Walking speed, m/s (default 5). */
  speed?: number;
  /** Position updates per second (default 10). */
  moveHz?: number;
  /** Seconds between counter raises (default 5). */
  propEvery?: number;
  /** Seconds before measuring (default 5). */
  warmup?: number;
  registry: EntityRegistry;
  /** Account name prefix (default "bot-" plus a run id, so runs never share accounts). */
  prefix?: string;
  /** Logins in flight at once (default 25). */
  loginConcurrency?: number;
  /** Receives progress lines (stderr in the CLI). */
  log?: (line: string) => void;
  /**
   * The AoI radius: when given, the report adds `leftInRange`, the leaves of
   * entities last seen well inside it (a client's view that flickered).
   */
  aoiRadius?: number;
  /**
   * Bots that watch the entities they see (spread evenly over the login order): they judge counters and
   * measure latency. The others count bytes and keep only the SDK's AoI model (which answers enters, so the
   * server sends them all a player gets) without per-entity events or moves (stepped over unread), so one process
   * can drive many clients.
   * Latency is then the first sighting of a move by any observer, as the Colyseus peer harness measures it.
   * Default: every bot watches and each sighting counts.
   */
  observers?: number;
  /**
   * "wander" (default): the heading drifts a little every step. "peer": the Colyseus peer harness's walk:
   * each step keeps the heading but for a 2 % chance of a new random one, and a bot clamped at the square's edge
   * picks a new one. Either way bots send in 10 groups 1/10 of the move interval apart, from one shared timer.
   */
  walk?: "wander" | "peer";
  /**
   * Told of each move sighting that counts for latency: who moved, to which x, when it was sent and first seen
   * (performance.now() ms of this process); benchmarks break the latency down with it.
   */
  onSighting?: (id: number, x: number, sentAt: number, seenAt: number) => void;
  /** Called when the measurement starts and ends (benchmarks sample process CPU there). */
  onMeasure?: (phase: "start" | "end") => void | Promise<void>;
}

/** The one JSON object the bots print. */
export interface BotReport {
  clients: number;
  connected: number;
  seconds: number;
  enters: number;
  leaves: number;
  updatesPerClientPerSec: number;
  /** Moves each connected bot sent per second (the --move-hz asked for, unless this process fell behind). */
  movesPerClientPerSec: number;
  bytesPerClientPerSec: number;
  propertyEvents: number;
  outOfOrder: number;
  gaps: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  errors: number;
  /** With `aoiRadius`: leaves of entities last seen more than 10 m inside the radius. */
  leftInRange?: number;
}

interface ClusterBody {
  processes: { role: string; clientUrl?: string }[];
}

async function getJson<T>(url: string, token?: string): Promise<T> {
  const res = await fetch(url, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return await res.json() as T;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

/** Runs the bots and returns the report; every bot is logged out or closed before it resolves. */
export async function runBots(o: BotOptions): Promise<BotReport> {
  const log = o.log ?? (() => {});
  const space = o.space ?? 1, speed = o.speed ?? 5, moveHz = o.moveHz ?? 10;
  const propEvery = o.propEvery ?? 5, warmup = o.warmup ?? 5;
  const admin = o.admin.replace(/\/$/, "");
  const urls = (await getJson<ClusterBody>(`${admin}/api/cluster`, o.adminToken)).processes
    .filter((p) => p.role === "baseapp" && p.clientUrl).map((p) => p.clientUrl!);
  if (urls.length === 0) throw new Error(`${admin}/api/cluster lists no baseapp with a clientUrl`);
  const { bounds } = await getJson<{ bounds: [number, number, number, number] }>(
    `${admin}/api/spaces/${space}`,
    o.adminToken,
  );
  const cx = (bounds[0] + bounds[2]) / 2, cz = (bounds[1] + bounds[3]) / 2;
  const half = o.side === undefined ? null : o.side / 2;
  const area = {
    minX: half === null ? bounds[0] : Math.max(bounds[0], cx - half),
    maxX: half === null ? bounds[2] : Math.min(bounds[2], cx + half),
    minZ: half === null ? bounds[1] : Math.max(bounds[1], cz - half),
    maxZ: half === null ? bounds[3] : Math.min(bounds[3], cz + half),
  };
  const prefix = o.prefix ?? `bot-${Date.now().toString(36)}-`;
  const totals: BotTotals = { enters: 0, leaves: 0, updates: 0, propertyEvents: 0, outOfOrder: 0, gaps: 0 };
  const moves = new MoveLog(o.observers !== undefined, o.onSighting);
  const decoding = (i: number) =>
    o.observers === undefined ||
    (o.observers > 0 && i % Math.max(1, Math.floor(o.count / o.observers)) === 0 &&
      i / Math.max(1, Math.floor(o.count / o.observers)) < o.observers);
  const latency = new LatencyHistogram();
  let measuring = false;
  let errors = 0;
  let leftInRange = 0;
  let violations = 0;
  let placedElsewhere = 0;
  const errorLines = new Map<string, number>();
  const fail = (what: string) => {
    errors++;
    const n = (errorLines.get(what) ?? 0) + 1;
    errorLines.set(what, n);
    if (n === 1) log(`error: ${what}`);
  };
  const clients: Client[] = [];
  // One timer drives every bot's moves, in 10 send groups (bot i in group i % 10).
  const clock = new MoveClock(1000 / moveHz, 10);
  let movesSent = 0;

  const start = async (i: number): Promise<void> => {
    const pos = {
      x: area.minX + Math.random() * (area.maxX - area.minX),
      y: 0,
      z: area.minZ + Math.random() * (area.maxZ - area.minZ),
    };
    const walk = { ...area };
    let c: Client | null = null;
    // A baseapp throttles logins from one address and queues their hashing: many bots from one host wait their turn.
    for (let attempt = 0; !c; attempt++) {
      try {
        c = await connect(urls[i % urls.length], {
          name: `${prefix}${i}`,
          password: "bot",
          spaceId: space,
          position: pos,
        }, {
          registry: o.registry,
          // The others still decode what enters and leaves, to answer enters as a player's client does (a client
          // that does not gets no updates), but step over the moves unread and raise no events: the server cannot
          // tell them from players, and the bot process spends its time on the observers.
          aoiEvents: decoding(i),
          aoiMoves: decoding(i),
        });
      } catch (e) {
        const why = errorText(e);
        // A baseapp behind on its logins closes a connection that waited too long: that one tries again too.
        if (!/try again|no login within/i.test(why) || attempt >= 30) return fail(`login: ${why}`);
        const s = /try again in ([\d.]+) ?s/.exec(why);
        await new Promise((r) => setTimeout(r, s ? Number(s[1]) * 1000 : 200 + 100 * attempt));
      }
    }
    clients.push(c);
    const self = c.player.id;
    const obs = new Observer(c.player.id, totals, moves, latency, () => measuring, (what, id, from, to) => {
      // The first few, with enough to find them in the servers' logs.
      if (violations++ < 10) log(`${what}: bot ${self} saw entity ${id}'s counter go from ${from} to ${to}`);
    });
    c.on("enter", (e) => obs.enter(e.id, e.props.counter));
    c.on("leave", (id) => {
      obs.left(id);
      // Judged from what this client last saw of the entity, against where it is itself.
      const last = seenAt.get(id);
      seenAt.delete(id);
      if (o.aoiRadius !== undefined && last && measuring) {
        if (Math.hypot(last.x - pos.x, last.z - pos.z) < o.aoiRadius - 10) leftInRange++;
      }
    });
    const seenAt = new Map<number, { x: number; z: number }>();
    c.on("enter", (e) => seenAt.set(e.id, { x: e.position.x, z: e.position.z }));
    c.on("move", (e) => seenAt.set(e.id, { x: e.position.x, z: e.position.z }));
    c.on("property", (e, name, value) => obs.property(e.id, name, value));
    c.on("move", (e) => obs.moved(e.id, e.position.x, e.position.z, performance.now()));
    c.on("error", (code, message) => fail(`server error ${code}: ${message.replace(/\d+/g, "N")}`));
    c.on("close", (code, reason) => {
      if (code !== 1000) fail(`connection closed: ${code} ${reason}`);
    });
    c.on("forcedPosition", (p) => Object.assign(pos, p));
    await new Promise<void>((r) => c.player.spaceId ? r() : c.on("cellReady", () => r()));
    if (c.player.spaceId !== space || Math.hypot(c.player.position.x - pos.x, c.player.position.z - pos.z) > 0.01) {
      placedElsewhere++;
      // The server chose: walk from there, in a square of the same size around it.
      Object.assign(pos, c.player.position);
      const [w, d] = [area.maxX - area.minX, area.maxZ - area.minZ];
      Object.assign(walk, { minX: pos.x - w / 2, maxX: pos.x + w / 2, minZ: pos.z - d / 2, maxZ: pos.z + d / 2 });
    }
    const walker = new Walker(pos, walk, speed / moveHz, o.walk ?? "wander");
    const raise = c.player.type.findMethod("cell", "raiseCounter");
    if (!raise) fail(`${c.player.type.name} has no cell method raiseCounter; counters stay still`);
    // The move message is encoded in place: one message object and one buffer per bot, no allocation per move.
    const msg = { id: C2S.position, pose: makePose() } satisfies ClientMessage;
    const out = new ByteWriter(32);
    let raiseAt = performance.now() + Math.random() * propEvery * 1000;
    clock.add(i, () => {
      if (c.closed || c.resuming) return;
      walker.step();
      const now = performance.now();
      moves.record(self, now, pos.x, pos.z);
      msg.pose.x = pos.x;
      msg.pose.y = pos.y;
      msg.pose.z = pos.z;
      msg.pose.yaw = walker.heading;
      out.reset();
      writeClientMessage(out, msg);
      c.sendFrame(out.bytes());
      if (measuring) movesSent++;
      if (raise && now >= raiseAt) {
        raiseAt += propEvery * 1000;
        c.callCell(null, "raiseCounter");
      }
    });
  };

  log(`logging ${o.count} bots in to ${urls.join(", ")} in space ${space} (${JSON.stringify(area)})`);
  clock.start();
  const queue = Array.from({ length: o.count }, (_, i) => i);
  await Promise.all(
    Array.from({ length: Math.min(o.loginConcurrency ?? 25, o.count) }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) await start(i);
    }),
  );
  if (placedElsewhere > 0) {
    log(
      `${placedElsewhere} bots were placed by the server, not where they asked; they walk from there ` +
        `(baseapps started with --client-spawn let them choose)`,
    );
  }
  log(`${clients.length} logged in; warming up for ${warmup} s`);
  await sleep(warmup * 1000);
  await o.onMeasure?.("start");
  const bytes0 = clients.reduce((n, c) => n + c.stats.bytesIn, 0);
  measuring = true;
  const t0 = performance.now();
  await sleep(o.duration * 1000);
  measuring = false;
  const seconds = (performance.now() - t0) / 1000;
  if (clock.missed > 0) {
    log(`this process fell behind: ${clock.missed} of ${clock.runs + clock.missed} send-group slots were skipped`);
  }
  await o.onMeasure?.("end");
  const connected = clients.filter((c) => !c.closed).length;
  const bytes = clients.reduce((n, c) => n + c.stats.bytesIn, 0) - bytes0;
  clock.stop();
  const perClient = (v: number) => connected ? round(v / connected / seconds) : 0;
  const report: BotReport = {
    clients: o.count,
    connected,
    seconds: round(seconds, 2),
    enters: totals.enters,
    leaves: totals.leaves,
    updatesPerClientPerSec: perClient(totals.updates),
    movesPerClientPerSec: perClient(movesSent),
    bytesPerClientPerSec: perClient(bytes),
    propertyEvents: totals.propertyEvents,
    outOfOrder: totals.outOfOrder,
    gaps: totals.gaps,
    latencyP50Ms: latency.percentile(50),
    latencyP99Ms: latency.percentile(99),
    errors,
    ...(o.aoiRadius !== undefined ? { leftInRange } : {}),
  };
  await Promise.race([Promise.all(clients.map((c) => c.logout())), sleep(10_000)]);
  for (const c of clients) c.close();
  for (const [what, n] of errorLines) if (n > 1) log(`error ×${n}: ${what}`);
  return report;
}
