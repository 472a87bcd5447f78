/**
 * The catalog of messages between processes, one group per role interface.
 * Kinds 1-15 belong to the channel itself (handshake, heartbeat, replies).
 */
import { message } from "./catalog.ts";
import { address as addressCheck, any, bytes, int, obj, oneOf, optional, str, tuple } from "./check.ts";
import { ROLES } from "./roles.ts";
import type { Role } from "./roles.ts";
import type { MetricFamily } from "./metrics.ts";
import type { GameVersionView } from "../views.ts";

/** The steps of a game reload, as the cellappmgr tells each process (ProcMsg.reloadGame). */
export type ReloadStep = "prepare" | "commit" | "abort";

export { type Role, ROLES } from "./roles.ts";

/** What the accepting side announces first. */
export interface ChallengeInfo {
  role: Role;
  version: number;
  nonce: Uint8Array;
}

/**
 * What the connecting side answers: who it is, with a cluster secret its proof over the challenge's nonce, and a
 * nonce of its own that the accepting side proves the secret over in turn.
 */
export interface HelloInfo {
  role: Role;
  pid: number;
  address: string;
  version: number;
  proof: Uint8Array | null;
  nonce: Uint8Array;
}

/** The accepting side's identity and, with a cluster secret, its proof over the hello's nonce. */
export interface WelcomeInfo {
  role: Role;
  pid: number;
  address: string;
  proof: Uint8Array | null;
}

/** Bytes in each side's handshake nonce. */
export const NONCE_BYTES = 16;

const role = oneOf(...ROLES);
/** A process may listen nowhere yet (a tool): an empty address, or HOST:PORT. */
const address = (v: unknown) => v === "" ? null : addressCheck(v);
/** A handshake nonce: exactly NONCE_BYTES random bytes. */
const nonce = (v: unknown) =>
  v instanceof Uint8Array && v.length === NONCE_BYTES ? null : `expected a nonce of ${NONCE_BYTES} bytes`;
/** Channel messages are the channel's own business: any role sends them. */
const anyone = ROLES;

/** Channel-level messages, handled by the channel itself. */
export const ChannelMsg = {
  challenge: message<[ChallengeInfo]>(
    1,
    "challenge",
    tuple(obj({ role, version: int(0), nonce: bytes(64) })),
    anyone,
  ),
  hello: message<[HelloInfo]>(
    2,
    "hello",
    tuple(
      obj({
        role,
        pid: int(0),
        address,
        version: int(0),
        proof: optional(bytes(64)),
        nonce: nonce,
      }),
    ),
    anyone,
  ),
  welcome: message<[WelcomeInfo]>(
    3,
    "welcome",
    tuple(obj({ role, pid: int(0), address, proof: optional(bytes(64)) })),
    anyone,
  ),
  refuse: message<[string]>(4, "refuse", tuple(str(1000)), anyone),
  heartbeat: message<[unknown]>(5, "heartbeat", tuple(any), anyone),
  reply: message<[unknown]>(6, "reply", tuple(any), anyone),
  errorReply: message<[string]>(7, "errorReply", tuple(str(4000)), anyone),
  bye: message<[string]>(8, "bye", tuple(str(1000)), anyone),
  /** Answered by the channel itself at once: a liveness and round-trip probe, in order with what came before. */
  ping: message<[], null>(9, "ping", tuple(), anyone),
} as const;

/** Messages every registered process (cellapp, baseapp) handles. */
export const ProcMsg = {
  /** Stop in an orderly way (persist what needs it), replying first. */
  stop: message<[string], boolean>(48, "stop", tuple(str(300)), ["cellappmgr"]),
  /** Exit at once, saving nothing (an operator's forced shutdown): what it held comes back by fault tolerance. */
  exitNow: message<[string]>(50, "exitNow", tuple(str(300)), ["cellappmgr"]),
  /**
   * The cellappmgr declared cellapp `id` (registration generation `generation`,
   * at `address`) dead and gave its cells away: whatever still comes from that
   * generation is stale and is dropped.
   */
  fenced: message<[number, number, string]>(
    49,
    "fenced",
    tuple(int(1, 2 ** 31), int(1, 2 ** 53), str(300)),
    ["cellappmgr"],
  ),
  /**
   * The process's own metrics, for GET /metrics. The reply is checked with
   * checkMetricFamilies (metrics.ts) by the cellappmgr.
   */
  metrics: message<[], MetricFamily[]>(56, "metrics", tuple(), ["cellappmgr"]),
  /**
   * One step of a game reload numbered `reload` (docs/game.md#reloading-a-game): "prepare" loads the game again and
   * checks it against the running one, keeping it aside (an error reply says why it cannot); "commit" swaps it in;
   * "abort" drops it. Replies with the process's game version after the step.
   */
  reloadGame: message<[ReloadStep, number], GameVersionView>(
    57,
    "reloadGame",
    tuple(oneOf("prepare", "commit", "abort"), int(1, 2 ** 31)),
    ["cellappmgr"],
  ),
} as const;
