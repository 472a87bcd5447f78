/** The inputs of the wire fuzzer: sample messages of every kind, and benign, hostile and pre-handshake frames. */
import { Encoder } from "@msgpack/msgpack";
import {
  BackupMsg,
  BaseBackupMsg,
  BaseMsg,
  BaseScriptMsg,
  CellMsg,
  ChannelMsg,
  FRAME_HEADER,
  type MessageDef,
  MgrMsg,
  NONCE_BYTES,
  PlayerMsg,
  ProcMsg,
  RestoreMsg,
  type Role,
  wireCodec,
} from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";
import { intIn, mutateBytes, mutateValue, pick, randomBytes, randomValue, type Rng } from "./random.ts";

const encoder = new Encoder({ extensionCodec: wireCodec });

/** A length-prefixed frame around `body`. */
export function frame(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_HEADER + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, FRAME_HEADER);
  return out;
}

export function encodeFrame(value: unknown): Uint8Array {
  return frame(encoder.encode(value));
}

/** Context that makes sample messages plausible. */
export interface Ctx {
  self: string;
  target: string;
  /** The role the fuzzer speaks as on this channel. */
  role: Role;
}

export type Sample = [MessageDef, (r: Rng, c: Ctx) => unknown[]];

const vec = (r: Rng) => [intIn(r, -600, 600), 0, intIn(r, -600, 600)];
const id = (r: Rng) => intIn(r, 1, 5000);
/** An entity a baseapp may name: mostly none that exists (acting for another's entity gets the peer dropped). */
const baseId = (r: Rng) => (r() < 0.1 ? id(r) : intIn(r, 100_000, 200_000));
const space = (r: Rng) => (r() < 0.8 ? 1 : intIn(r, 1, 5));
/**
 * A navigation geometry file as a space or a new-space request names it: mostly one that is missing, not a mesh or
 * of an unknown kind (each fails the load once, then that failure is remembered), now and then a real small mesh.
 */
const navFile = (r: Rng) =>
  pick(r, [
    "tests/fixtures/nav/wall.obj",
    "tests/fixtures/nav/not_a_mesh.obj",
    `fuzz/missing_${intIn(r, 0, 3)}.obj`,
    "fuzz/missing.navmesh",
    "fuzz/unknown.txt",
    "../../../../etc/hostname.json",
  ]);
const geometry = (r: Rng, c: Ctx) => ({
  spaceId: space(r),
  bounds: [-500, -500, 500, 500],
  tree: { cell: { id: 1, cellapp: intIn(r, 1, 4) } },
  isDefault: r() < 0.5,
  cellapps: [[intIn(r, 1, 4), c.self]],
  ...(r() < 0.3 ? { aoiRadius: intIn(r, 1, 600), ghostRadius: intIn(r, 1, 700) } : {}),
  ...(r() < 0.2 ? { navGeometry: navFile(r) } : {}),
  ...(r() < 0.2 ? { shutDownWhenEmpty: r() < 0.5 } : {}),
});
/** Where a base asks its cell entity to go: near another entity, or (rarely: each makes a space) in a new space. */
const placeRequest = (r: Rng) =>
  r() < 0.9 ? { near: id(r), positionGiven: r() < 0.5, newSpace: null } : {
    near: null,
    positionGiven: r() < 0.5,
    newSpace: {
      width: intIn(r, 10, 400),
      depth: intIn(r, 10, 400),
      cells: intIn(r, 1, 2),
      preferredHost: r() < 0.7 ? null : pick(r, ["127.0.0.1", "elsewhere"]),
      geometry: r() < 0.5 ? null : navFile(r),
    },
  };
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
  [MgrMsg.placeCellEntity, (r, c) => [{ ...spec(r, c), spaceId: 0, entityId: intIn(r, 1, 100) }, placeRequest(r)]],
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
  [CellMsg.teleportIn, (r, c) => [{
    ...offload(r, c),
    hadWitness: r() < 0.5,
    ...(r() < 0.5 ? { answersOwed: Array.from({ length: intIn(r, 0, 4) }, () => id(r)) } : {}),
  }]],
  [CellMsg.destroyCellEntity, (r) => [baseId(r)]],
  [BaseMsg.cellEntityDestroyed, (r) => [id(r), "fuzz"]],
  [BaseMsg.toClient, (r) => [id(r), intIn(r, 0, 3), randomBytes(r, intIn(r, 0, 32)), 0]],
  [BaseMsg.cellEntityMoved, (r, c) => [id(r), 1, c.target, intIn(r, 0, 3)]],
  [BaseMsg.clientError, (r) => [id(r), 3, 4, "fuzz"]],
  [BaseMsg.teleported, (r) => [id(r), intIn(r, 0, 3), space(r), vec(r), [r(), 0, 0]]],
  [CellMsg.cellPersistentState, (r) => [baseId(r)]],
  // A base moves its own cell entity (those the fuzzer made as a baseapp are its own) to a space and place.
  [BaseScriptMsg.cellTeleport, (r) => [id(r), space(r), r() < 0.8 ? vec(r) : [intIn(r, -1e6, 1e6), 0, 0]]],
  [BaseScriptMsg.clientMessage, (r) => [id(r), pick(r, ["chat", "onHit", "nope"]), [randomValue(r, 2)]]],
  [ProcMsg.reloadGame, (r) => [pick(r, ["prepare", "commit", "abort"] as const), intIn(r, 1, 5)]],
];

/** Which roles serve each sampled message (channel messages, absent here, every role serves). */
export const SERVED_BY: ReadonlyMap<MessageDef, readonly Role[]> = new Map<MessageDef, readonly Role[]>([
  ...Object.values(MgrMsg).map((d) => [d, ["cellappmgr"]] as const),
  ...Object.values(CellMsg).map((d) => [d, ["cellapp"]] as const),
  ...Object.values(BaseMsg).map((d) => [d, ["baseapp"]] as const),
  [BaseScriptMsg.cellTeleport, ["cellapp"]],
  [BaseScriptMsg.clientMessage, ["baseapp"]],
  [ProcMsg.reloadGame, ["cellapp", "baseapp"]],
]);

/**
 * The declared kinds the wire fuzzer has no sample of, and why. A kind neither sampled nor here fails
 * tests/tools/wire_samples_test.ts: a new message gets a sample (or a reason here).
 */
export const NOT_SAMPLED: ReadonlyMap<MessageDef, string> = new Map<MessageDef, string>([
  ...[ChannelMsg.challenge, ChannelMsg.hello, ChannelMsg.welcome, ChannelMsg.refuse].map((d) =>
    [d, "the handshake's: fuzzed before it (preInput)"] as const
  ),
  [ChannelMsg.bye, "ends the channel: sent by hostile inputs as any kind"],
  [ChannelMsg.ping, "closes every batch of inputs (wire.ts)"],
  ...[ProcMsg.stop, ProcMsg.exitNow].map((d) => [d, "stops the process by design (from its cellappmgr only)"] as const),
  ...[ProcMsg.fenced, ProcMsg.metrics, PlayerMsg.listPlayers, PlayerMsg.kickPlayer].map((d) =>
    [d, "not sampled yet: from the cellappmgr only, on the link a process opened"] as const
  ),
  ...[CellMsg.clientMoves, CellMsg.ghostSyncs, BaseMsg.toClients].map((d) =>
    [d, "not sampled yet: records (core/wire/*_records.ts), each read as the message it batches"] as const
  ),
  ...[...Object.values(BackupMsg), ...Object.values(RestoreMsg), ...Object.values(BaseBackupMsg)].map((d) =>
    [d, "not sampled yet: fault tolerance's backups and restores"] as const
  ),
  ...[
    BaseScriptMsg.baseCall,
    BaseScriptMsg.hasBase,
    BaseScriptMsg.cellCall,
    BaseScriptMsg.createBaseAnywhere,
    BaseScriptMsg.createBase,
    BaseScriptMsg.setGlobal,
    BaseScriptMsg.globalChanged,
    BaseScriptMsg.syncGlobals,
  ].map((d) => [d, "not sampled yet: base scripts' calls and global data"] as const),
]);

/** The message kinds that have a sample. */
export function sampledKinds(): Set<number> {
  return new Set(SAMPLES.map(([def]) => def.kind));
}

/** Samples a peer of `role` may send to a process of role `target` (many are then refused by its checks). */
export function samplesFor(role: Role, target: Role): Sample[] {
  return SAMPLES.filter(([def]) => def.from.includes(role) && (SERVED_BY.get(def)?.includes(target) ?? true));
}

/**
 * One input for an open channel that the process should read and survive
 * without dropping the peer, mostly: a message its role may send, with
 * values pushed around (some of them past the checks, which drops the peer).
 */
export function benignInput(r: Rng, c: Ctx, samples: Sample[], reqId: () => number): Uint8Array {
  const [def, make] = pick(r, samples);
  let args = make(r, c);
  if (r() < 0.1) args = mutateValue(r, args) as unknown[];
  return encodeFrame([def.kind, r() < 0.4 ? reqId() : 0, ...args]);
}

/** One input that an open channel should not survive: any kind, a random value, bytes that are not msgpack. */
export function hostileInput(r: Rng, c: Ctx, reqId: () => number): Uint8Array {
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
export function preInput(r: Rng, c: Ctx): Uint8Array {
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
