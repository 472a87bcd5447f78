/**
 * The catalog of messages between processes, one group per role interface.
 * Kinds 1-15 belong to the channel itself (handshake, heartbeat, replies).
 */
import { message } from "./catalog.ts";
import { any, bytes, int, obj, oneOf, optional, str, tuple } from "./check.ts";

/** The roles a process can have; `tool` is a benchmark or test peer that never registers. */
export const ROLES = ["cellappmgr", "cellapp", "baseapp", "tool"] as const;
/** One of ROLES. */
export type Role = typeof ROLES[number];

/** What the accepting side announces first. */
export interface ChallengeInfo {
  role: Role;
  version: number;
  nonce: Uint8Array;
}

/** What the connecting side answers: who it is and, with a cluster secret, a proof. */
export interface HelloInfo {
  role: Role;
  pid: number;
  address: string;
  version: number;
  proof: Uint8Array | null;
}

/** The accepting side's identity, sent once the handshake succeeded. */
export interface WelcomeInfo {
  role: Role;
  pid: number;
  address: string;
}

const role = oneOf(...ROLES);
const address = str(300);

/** Channel-level messages, handled by the channel itself. */
export const ChannelMsg = {
  challenge: message<[ChallengeInfo]>(
    1,
    "challenge",
    tuple(obj({ role, version: int(0), nonce: bytes(64) })),
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
      }),
    ),
  ),
  welcome: message<[WelcomeInfo]>(
    3,
    "welcome",
    tuple(obj({ role, pid: int(0), address })),
  ),
  refuse: message<[string]>(4, "refuse", tuple(str(1000))),
  heartbeat: message<[unknown]>(5, "heartbeat", tuple(any)),
  reply: message<[unknown]>(6, "reply", tuple(any)),
  errorReply: message<[string]>(7, "errorReply", tuple(str(4000))),
  bye: message<[string]>(8, "bye", tuple(str(1000))),
} as const;

/** Messages every registered process (cellapp, baseapp) handles. */
export const ProcMsg = {
  /** Stop in an orderly way (persist what needs it), replying first. */
  stop: message<[string], boolean>(48, "stop", tuple(str(300))),
} as const;
