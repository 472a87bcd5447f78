/**
 * A fuzzer for the process ports (cellappmgr, cellapp, baseapp): random and
 * mutated frames, before the handshake and, knowing the cluster secret, after
 * it under every role. Each input is accounted for: frames sent after the
 * handshake go in batches closed by a `ping`, and when the process drops the
 * connection the batch is replayed one frame per connection, so every input
 * is known to have been read by the process.
 */
import { Encoder } from "@msgpack/msgpack";
import {
  BaseMsg,
  CellMsg,
  ChannelMsg,
  FRAME_HEADER,
  FrameReader,
  type MessageDef,
  MgrMsg,
  NONCE_BYTES,
  NONE,
  type Role,
  wireCodec,
} from "../../core/wire/mod.ts";
import { makeProof } from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";
import { intIn, mutateBytes, mutateValue, pick, randomBytes, randomValue, type Rng, rng } from "./random.ts";

/** What the wire fuzzer is pointed at. */
export interface WireFuzzOptions {
  /** HOST:PORT of the process port. */
  address: string;
  /** The cluster secret, to get past the handshake; null when the cluster has none. */
  secret: string | null;
  seed: number;
  /** Inputs to send. */
  count: number;
  /** Connections at once. */
  concurrency?: number;
  /** Stop early (with fewer inputs) after this long. */
  deadlineMs?: number;
  /** Share of connections that send one input before any handshake (default 0.15). */
  preHandshake?: number;
  /** Frames per batch after the handshake (default 16). */
  batch?: number;
}

/** What a fuzz run did. */
export interface WireFuzzReport {
  /** Inputs the process read (before or after the handshake). */
  inputs: number;
  connections: number;
  /** Connections the process closed before the batch's ping was answered. */
  dropped: number;
  ms: number;
  /** Why the process dropped connections (its `bye` reasons, numbers masked), most frequent first. */
  reasons: [string, number][];
}

const encoder = new Encoder({ extensionCodec: wireCodec });

/** A length-prefixed frame around `body`. */
export function frame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, FRAME_HEADER);
  return out;
}

function encodeFrame(value: unknown): Uint8Array {
  return frame(encoder.encode(value));
}

/** Context that makes sample messages plausible. */
interface Ctx {
  self: string;
  target: string;
  /** The role the fuzzer speaks as on this channel. */
  role: Role;
}

type Sample = [MessageDef, (r: Rng, c: Ctx) => unknown[]];

const vec = (r: Rng) => [intIn(r, -600, 600), 0, intIn(r, -600, 600)];
const id = (r: Rng) => intIn(r, 1, 5000);
/** An entity a baseapp may name: mostly none that exists (acting for another's entity gets the peer dropped). */
const baseId = (r: Rng) => (r() < 0.1 ? id(r) : intIn(r, 100_000, 200_000));
const space = (r: Rng) => (r() < 0.8 ? 1 : intIn(r, 1, 5));
const geometry = (r: Rng, c: Ctx) => ({
  spaceId: space(r),
  bounds: [-500, -500, 500, 500],
  tree: { cell: { id: 1, cellapp: intIn(r, 1, 4) } },
  isDefault: r() < 0.5,
  cellapps: [[intIn(r, 1, 4), c.self]],
  ...(r() < 0.3 ? { aoiRadius: intIn(r, 1, 600), ghostRadius: intIn(r, 1, 700) } : {}),
});
const spec = (r: Rng, c: Ctx) => ({
  spaceId: space(r),
  entityId: id(r),
  type: pick(r, ["Avatar", "NPC", "Account"]),
  position: vec(r),
  direction: [0, 0, 0],
  props: randomBytes(r, intIn(r, 0, 8)),
  baseAddress: c.self,
  hasClient: r() < 0.5,
});
const ghost = (r: Rng, c: Ctx) => ({
  spaceId: 1,
  cellId: 1,
  id: id(r),
  type: pick(r, ["NPC", "Avatar"]),
  position: vec(r),
  direction: [0, 0, 0],
  isOnGround: true,
  props: randomBytes(r, intIn(r, 0, 12)),
  syncSeq: intIn(r, 0, 10),
  epoch: intIn(r, 0, 3),
  realCellapp: intIn(r, 1, 4),
  realAddress: c.self,
  realCell: 2,
  baseAddress: null,
  history: { lastSeq: 0, trimmedTo: 0, propStamps: [], events: [] },
});
const offload = (r: Rng, c: Ctx) => ({
  spaceId: 1,
  cellId: 1,
  entity: {
    id: id(r),
    type: "NPC",
    position: vec(r),
    direction: [0, 0, 0],
    isOnGround: true,
    props: randomBytes(r, intIn(r, 0, 12)),
    controllers: [],
    nextControllerId: 1,
  },
  syncSeq: 0,
  ghosts: [],
  from: [intIn(r, 1, 4), c.self, 2],
  baseAddress: null,
  hasClient: false,
  epoch: 0,
  witness: null,
});

/** A valid-looking message of every kind a process port serves. */
const SAMPLES: Sample[] = [
  [ChannelMsg.heartbeat, (r) => [{ load: r() }]],
  [ChannelMsg.reply, (r) => [randomValue(r, 2)]],
  [ChannelMsg.errorReply, () => ["no"]],
  [MgrMsg.register, (r, c) => [{
    role: c.role,
    pid: Deno.pid,
    address: c.self,
    previousId: r() < 0.5 ? null : intIn(r, 1, 5),
    clientUrl: null,
    startedAt: Date.now(),
    entityIdHighWater: intIn(r, 0, 10_000),
    ...(r() < 0.5 ? {} : { spaces: [geometry(r, c)] }),
  }]],
  [MgrMsg.allocateIds, (r) => [intIn(r, 1, 100)]],
  [MgrMsg.requestShutDownSpace, (r) => [space(r), "fuzz"]],
  [MgrMsg.loadReport, (r) => [{
    load: r(),
    cells: [{
      spaceId: 1,
      cellId: 1,
      reals: 3,
      ghosts: 0,
      tickRate: 10,
      tickMsP50: 1,
      tickMsP99: 2,
      load: r(),
      offloadsIn: 0,
      offloadsOut: 0,
      hadEntities: false,
    }],
  }]],
  [MgrMsg.findCell, (r) => [space(r), intIn(r, -600, 600), intIn(r, -600, 600)]],
  [MgrMsg.setSpaceSettings, (r) => [space(r), { aoiRadius: intIn(r, 1, 600), ghostRadius: intIn(r, 1, 700) }]],
  [MgrMsg.createCellEntity, (r, c) => [{ ...spec(r, c), spaceId: intIn(r, 1, 2), entityId: intIn(r, 1, 100) }]],
  [CellMsg.createCell, (r, c) => [geometry(r, c)]],
  [CellMsg.updateGeometry, (r, c) => [geometry(r, c)]],
  [CellMsg.shutDownSpace, (r) => [intIn(r, 2, 5)]],
  [CellMsg.spawn, () => [{ spaceId: 1, cellId: 1, type: "NPC", count: 1, ids: [2 ** 47, 2 ** 47] }]],
  [CellMsg.describeCell, (r) => [space(r)]],
  [CellMsg.findEntity, (r) => [id(r)]],
  [CellMsg.entityProperties, (r) => [id(r)]],
  [CellMsg.createCellEntity, (r, c) => [spec(r, c)]],
  [CellMsg.enableWitness, (r) => [baseId(r)]],
  [CellMsg.disableWitness, (r) => [baseId(r)]],
  [
    CellMsg.clientCall,
    (
      r,
      c,
    ) => [
      id(r),
      id(r),
      intIn(r, 0, 2),
      intIn(r, 0, 4),
      randomBytes(r, intIn(r, 0, 8)),
      c.self,
      intIn(r, 0, 9),
      r() < 0.5,
    ],
  ],
  [CellMsg.clientPosition, (r) => [baseId(r), vec(r), [r(), 0, 0]]],
  [CellMsg.clientAoi, (r) => [baseId(r), randomBytes(r, intIn(r, 0, 12))]],
  [CellMsg.createGhost, (r, c) => [ghost(r, c)]],
  [CellMsg.ghostSync, (r) => [1, 1, id(r), intIn(r, 0, 5), [[0, 1, 0, 1, 0, 0, 0, true], [1, randomBytes(r, 4)]]]],
  [CellMsg.deleteGhost, (r) => [1, 1, id(r), intIn(r, 0, 3)]],
  [CellMsg.ghostSeq, (r) => [1, 1, id(r), intIn(r, 0, 3), intIn(r, 0, 9)]],
  [CellMsg.handOverWrites, (r) => [1, 1, id(r), [[0, 1, 0, 1, 0, 0, 0], [1, randomBytes(r, 4)]]]],
  [CellMsg.ghostResync, (r) => [1, 1, id(r), 2]],
  [CellMsg.offload, (r, c) => [offload(r, c)]],
  [CellMsg.realMoved, (r, c) => [1, 1, id(r), intIn(r, 1, 4), c.self, 2, intIn(r, 0, 3)]],
  [CellMsg.entityCall, (r) => [1, 1, id(r), id(r), pick(r, ["attack", "takeDamage", "nope"]), [intIn(r, 0, 9)]]],
  [CellMsg.teleportIn, (r, c) => [{ ...offload(r, c), hadWitness: false }]],
  [CellMsg.destroyCellEntity, (r) => [baseId(r)]],
  [BaseMsg.cellEntityDestroyed, (r) => [id(r), "fuzz"]],
  [BaseMsg.toClient, (r) => [id(r), intIn(r, 0, 3), randomBytes(r, intIn(r, 0, 32)), 0]],
  [BaseMsg.cellEntityMoved, (r, c) => [id(r), 1, c.target, intIn(r, 0, 3)]],
  [BaseMsg.clientError, (r) => [id(r), 3, 4, "fuzz"]],
];

/** Which role serves each message group. */
const SERVED_BY = new Map<MessageDef, Role>([
  ...Object.values(MgrMsg).map((d) => [d, "cellappmgr"] as const),
  ...Object.values(CellMsg).map((d) => [d, "cellapp"] as const),
  ...Object.values(BaseMsg).map((d) => [d, "baseapp"] as const),
]);

/** Samples a peer of `role` may send to a process of role `target` (many are then refused by its checks). */
function samplesFor(role: Role, target: Role): Sample[] {
  return SAMPLES.filter(([def]) => def.from.includes(role) && (SERVED_BY.get(def) ?? target) === target);
}

/**
 * One input for an open channel that the process should read and survive
 * without dropping the peer, mostly: a message its role may send, with
 * values pushed around (some of them past the checks, which drops the peer).
 */
function benignInput(r: Rng, c: Ctx, samples: Sample[], reqId: () => number): Uint8Array {
  const [def, make] = pick(r, samples);
  let args = make(r, c);
  if (r() < 0.1) args = mutateValue(r, args) as unknown[];
  return encodeFrame([def.kind, r() < 0.4 ? reqId() : 0, ...args]);
}

/** One input that an open channel should not survive: any kind, a random value, bytes that are not msgpack. */
function hostileInput(r: Rng, c: Ctx, reqId: () => number): Uint8Array {
  const roll = r();
  if (roll < 0.3) {
    const [def, make] = pick(r, SAMPLES);
    const bytes = encodeFrame(mutateValue(r, [def.kind, r() < 0.3 ? reqId() : 0, ...make(r, c)]));
    return roll < 0.1 ? frame(mutateBytes(r, bytes.subarray(FRAME_HEADER))) : bytes;
  }
  if (roll < 0.55) {
    const args = randomValue(r, 3);
    return encodeFrame([intIn(r, 0, 1100), reqId(), ...(Array.isArray(args) ? args : [args])]);
  }
  if (roll < 0.8) return encodeFrame(randomValue(r, 5));
  return frame(randomBytes(r, intIn(r, 0, 64)));
}

/** One input before the handshake: a mutated hello, a random value or random bytes, or a hostile length. */
function preInput(r: Rng, c: Ctx): Uint8Array {
  const roll = r();
  if (roll < 0.4) {
    const hello = {
      role: "cellapp",
      pid: 1,
      address: c.self,
      version: PROTOCOL_VERSION,
      proof: randomBytes(r, 32),
      nonce: randomBytes(r, NONCE_BYTES),
    };
    return encodeFrame(mutateValue(r, [ChannelMsg.hello.kind, 0, hello]));
  }
  if (roll < 0.7) return encodeFrame(randomValue(r, 5));
  if (roll < 0.8) {
    // A length far beyond the handshake's limit, with a little of the body.
    const out = new Uint8Array(4 + 64).fill(0x91);
    new DataView(out.buffer).setUint32(0, intIn(r, 5000, 2 ** 31));
    return out;
  }
  return mutateBytes(r, frame(randomBytes(r, intIn(r, 0, 200))));
}

/** A raw connection with a frame reader, for talking the handshake by hand. */
class Raw {
  readonly reader = new FrameReader(1 << 20);
  closed = false;
  /** The role the process announced in its challenge. */
  peerRole: Role | null = null;

  /** `byes` collects why the process said goodbye, by reason with numbers masked. */
  constructor(readonly conn: Deno.TcpConn, readonly byes: Map<string, number> = new Map()) {}

  async next(timeoutMs: number): Promise<unknown> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const f = this.reader.next();
      if (f !== NONE) return f;
      const left = deadline - performance.now();
      if (left <= 0) return NONE;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        this.conn.read(this.reader.space()).catch(() => null),
        new Promise<"timeout">((res) => timer = setTimeout(() => res("timeout"), left)),
      ]);
      clearTimeout(timer);
      if (n === "timeout") return NONE;
      if (n === null) {
        this.closed = true;
        return NONE;
      }
      this.reader.commit(n);
    }
  }

  async write(bytes: Uint8Array): Promise<boolean> {
    try {
      let off = 0;
      while (off < bytes.length) off += await this.conn.write(bytes.subarray(off));
      return true;
    } catch {
      this.closed = true;
      return false;
    }
  }

  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }
}

async function open(address: string, byes?: Map<string, number>): Promise<Raw | null> {
  const [host, port] = [address.replace(/:\d+$/, "").replace(/^\[|\]$/g, ""), Number(address.split(":").pop())];
  try {
    const conn = await Deno.connect({ hostname: host, port });
    conn.setNoDelay(true);
    return new Raw(conn, byes);
  } catch {
    return null;
  }
}

/** Reads the challenge and answers with a hello as `role` (with a proof when there is a secret); false when refused. */
async function handshake(raw: Raw, role: Role, self: string, secret: string | null): Promise<boolean> {
  const challenge = await raw.next(5000);
  if (!Array.isArray(challenge) || challenge[0] !== ChannelMsg.challenge.kind) return false;
  const nonce = (challenge[2] as { nonce: Uint8Array }).nonce;
  raw.peerRole = (challenge[2] as { role: Role }).role;
  const proof = secret === null ? null : await makeProof(secret, nonce, "hello", role, Deno.pid, self);
  const mine = crypto.getRandomValues(new Uint8Array(NONCE_BYTES));
  await raw.write(
    encodeFrame([ChannelMsg.hello.kind, 0, {
      role,
      pid: Deno.pid,
      address: self,
      version: PROTOCOL_VERSION,
      proof,
      nonce: mine,
    }]),
  );
  const welcome = await raw.next(5000);
  return Array.isArray(welcome) && welcome[0] === ChannelMsg.welcome.kind;
}

/** The role a process port announces in its challenge. */
async function targetRole(address: string): Promise<Role> {
  const raw = await open(address);
  if (!raw) throw new Error(`cannot connect to ${address}`);
  try {
    const challenge = await raw.next(5000);
    if (!Array.isArray(challenge) || challenge[0] !== ChannelMsg.challenge.kind) {
      throw new Error(`${address} did not send a challenge`);
    }
    return (challenge[2] as { role: Role }).role;
  } finally {
    raw.close();
  }
}

/** Sends `frames` then a ping; true when the ping was answered (so every frame was read and none was fatal). */
async function batchAnswered(raw: Raw, frames: Uint8Array[], pingId: number): Promise<boolean> {
  // One write for the batch and its ping.
  const ping = encodeFrame([ChannelMsg.ping.kind, pingId]);
  const all = new Uint8Array(frames.reduce((n, f) => n + f.length, ping.length));
  let at = 0;
  for (const f of [...frames, ping]) {
    all.set(f, at);
    at += f.length;
  }
  if (!(await raw.write(all))) return false;
  for (;;) {
    const m = await raw.next(10_000);
    if (m === NONE) return false;
    if (!Array.isArray(m)) continue;
    if (m[0] === ChannelMsg.reply.kind && m[1] === pingId) return true;
    if (m[0] === ChannelMsg.bye.kind) {
      const why = String(m[2]).replace(/\d+/g, "N").slice(0, 120);
      raw.byes.set(why, (raw.byes.get(why) ?? 0) + 1);
    }
  }
}

/**
 * Fuzzes one process port until `count` inputs were read (or the deadline):
 * no input may hang the process or make it refuse the next connection.
 */
export async function fuzzWirePort(o: WireFuzzOptions): Promise<WireFuzzReport> {
  const r = rng(o.seed);
  const t0 = performance.now();
  const deadline = t0 + (o.deadlineMs ?? 600_000);
  const pre = o.preHandshake ?? 0.15;
  const batch = o.batch ?? 16;
  // An address that is no listener's: what the fuzzer claims to be.
  const ctx: Ctx = { self: `127.0.0.1:${intIn(r, 20_000, 60_000)}`, target: o.address, role: "cellapp" };
  const report: WireFuzzReport = { inputs: 0, connections: 0, dropped: 0, ms: 0, reasons: [] };
  const byes = new Map<string, number>();
  let reqIds = 100;
  const reqId = () => (reqIds = reqIds >= 0x7ffffff0 ? 100 : reqIds + 1);
  const left = () => o.count - report.inputs;
  const roles: Role[] = ["cellapp", "baseapp"];
  const target = await targetRole(o.address);
  const register = (role: Role) =>
    encodeFrame([MgrMsg.register.kind, reqId(), {
      role,
      pid: Deno.pid,
      address: ctx.self,
      previousId: null,
      clientUrl: null,
      startedAt: Date.now(),
      entityIdHighWater: 0,
    }]);

  const connect = async (): Promise<Raw> => {
    const raw = await open(o.address, byes);
    if (!raw) throw new Error(`${o.address} refused a connection after ${report.inputs} inputs`);
    report.connections++;
    return raw;
  };

  const preOne = async (input: Uint8Array) => {
    const raw = await connect();
    await raw.next(5000); // the challenge
    await raw.write(input);
    // The process reads the frame and answers, refuses, or waits for more bytes (then its handshake timeout ends it).
    await raw.next(20);
    raw.close();
    report.inputs++;
  };

  /**
   * Opens a channel as `role` and sends `frames` in batches, each closed by a
   * ping. Returns how many were read without harm, and how many of the next
   * were in the batch that lost the connection (one of them was fatal).
   * Null when the handshake was refused (the hello was the input read).
   */
  const session = async (role: Role, frames: Uint8Array[], last?: Uint8Array) => {
    const raw = await connect();
    try {
      if (!(await handshake(raw, role, ctx.self, o.secret))) {
        report.inputs++;
        return null;
      }
      // The cellappmgr hears a member only once it registered: most sessions do, first (not counted as an input).
      if (target === "cellappmgr" && role !== "tool" && !(await batchAnswered(raw, [register(role)], reqId()))) {
        return { read: 0, lost: 0 };
      }
      let read = 0;
      while (read < frames.length) {
        const now = frames.slice(read, read + batch);
        if (!(await batchAnswered(raw, now, reqId()))) {
          report.dropped++;
          return { read, lost: now.length };
        }
        read += now.length;
      }
      if (last) {
        // Meant to end the channel: it is read once the channel closes, or answers the ping after it.
        await batchAnswered(raw, [last], reqId());
        read++;
      }
      return { read, lost: 0 };
    } finally {
      raw.close();
    }
  };

  /** Sends `frames` as `role` until each is known to have been read, splitting batches that lost their connection. */
  const deliver = async (role: Role, frames: Uint8Array[], last?: Uint8Array): Promise<void> => {
    while (frames.length > 0 || last) {
      const res = await session(role, frames, last);
      if (res === null) return;
      report.inputs += res.read;
      if (res.lost === 0) return;
      const lost = frames.slice(res.read, res.read + res.lost);
      if (lost.length === 1) report.inputs++;
      else {
        const half = lost.length >> 1;
        await deliver(role, lost.slice(0, half));
        await deliver(role, lost.slice(half));
      }
      frames = frames.slice(res.read + res.lost);
    }
  };

  const worker = async () => {
    while (left() > 0 && performance.now() < deadline) {
      if (r() < pre) {
        await preOne(preInput(r, ctx));
        continue;
      }
      const role: Role = r() < 0.03 ? "tool" : pick(r, roles);
      const samples = samplesFor(role, target);
      const c = { ...ctx, role };
      const n = Math.min(intIn(r, 1, batch * 2), left());
      const frames = samples.length === 0 ? [] : Array.from({ length: n }, () => benignInput(r, c, samples, reqId));
      await deliver(role, frames, r() < 0.5 ? hostileInput(r, c, reqId) : undefined);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency ?? 8 }, worker));
  report.ms = performance.now() - t0;
  report.reasons = [...byes].sort((a, b) => b[1] - a[1]).slice(0, 12);
  return report;
}
