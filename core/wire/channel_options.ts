import type { Logger } from "../log.ts";
import { silentLogger } from "../log.ts";
import { DEFAULT_MAX_FRAME } from "./frame.ts";
import type { HandshakeSide } from "./handshake.ts";
import type { Role } from "./messages.ts";

/**
 * What a channel needs of its handler table (`Handlers`): the handler of a message kind, if served. A handler takes
 * the Channel it came on first; the type says `never` so that these options need not know the Channel class.
 */
export interface HandlerTable {
  // deno-lint-ignore no-explicit-any
  get(kind: number): ((ch: never, ...args: any[]) => unknown) | undefined;
}

/** The table of a channel given none: it serves no kind. */
const NO_HANDLERS: HandlerTable = { get: () => undefined };

/** How a channel behaves; every field but the identity has a default. */
export interface ChannelOptions {
  /** This process's role, pid and listening address, sent in the handshake. */
  role: Role;
  pid?: number;
  address?: string;
  /** Cluster secret; both ends must have the same one, or none. */
  secret?: string | null;
  maxFrame?: number;
  heartbeatMs?: number;
  /** A channel that hears nothing for this long is closed as dead. */
  deadAfterMs?: number;
  requestTimeoutMs?: number;
  handshakeTimeoutMs?: number;
  /** Buffered bytes past which a write goes out before the tick ends. */
  flushThreshold?: number;
  handlers?: HandlerTable;
  /** Produces the payload of each heartbeat this side sends. */
  heartbeatPayload?: () => unknown;
  log?: Logger;
  /** Accepting side: the roles a peer may have; others are refused in the handshake. */
  acceptRoles?: readonly Role[];
  /** Connecting side: the roles the peer must have; another is a protocol violation. */
  expectRoles?: readonly Role[];
  /** Connecting side: the address dialled, which names the peer from then on. */
  dialed?: string;
  /**
   * Check what this side sends against the message's definition and throw
   * instead of sending nonsense: the peer would drop this process for it.
   * For low-traffic channels, such as a member's link to the cellappmgr.
   */
  checkOutgoing?: boolean;
  /** With it the listener serves TLS and the dialler checks the peer against its CA (endpoint.ts). */
  tls?: WireTls | null;
}

/** The PEM material of process ports over TLS: this process's certificate and key, and the CA every peer's has. */
export interface WireTls {
  cert: string;
  key: string;
  ca: string;
}

/**
 * Largest frame before the handshake is done: a challenge, hello, welcome or
 * refusal is a few hundred bytes, and nothing bigger is decoded from a peer
 * that has not proved the secret.
 */
export const HANDSHAKE_MAX_FRAME = 4096;

/** A channel's options with every default filled in (`resolveChannelOptions`). */
export interface ResolvedChannelOptions extends HandshakeSide {
  maxFrame: number;
  heartbeatMs: number;
  deadAfterMs: number;
  requestTimeoutMs: number;
  handshakeTimeoutMs: number;
  flushThreshold: number;
  handlers: HandlerTable;
  heartbeatPayload: (() => unknown) | null;
  log: Logger;
  checkOutgoing: boolean;
}

/** Fills in the defaults of a channel's options. */
export function resolveChannelOptions(opts: ChannelOptions): ResolvedChannelOptions {
  return {
    role: opts.role,
    pid: opts.pid ?? Deno.pid,
    address: opts.address ?? "",
    secret: opts.secret ?? null,
    maxFrame: opts.maxFrame ?? DEFAULT_MAX_FRAME,
    heartbeatMs: opts.heartbeatMs ?? 500,
    deadAfterMs: opts.deadAfterMs ?? 2000,
    requestTimeoutMs: opts.requestTimeoutMs ?? 5000,
    handshakeTimeoutMs: opts.handshakeTimeoutMs ?? 5000,
    flushThreshold: opts.flushThreshold ?? 64 * 1024,
    handlers: opts.handlers ?? NO_HANDLERS,
    heartbeatPayload: opts.heartbeatPayload ?? null,
    log: opts.log ?? silentLogger,
    acceptRoles: opts.acceptRoles ?? null,
    expectRoles: opts.expectRoles ?? null,
    dialed: opts.dialed ?? null,
    checkOutgoing: opts.checkOutgoing ?? false,
  };
}
