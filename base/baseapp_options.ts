/** A baseapp's options, and the defaults of those not given. */
import type { EntityRegistry } from "../core/def/mod.ts";
import type { Vec3Tuple } from "../core/proto/mod.ts";
import { type PlacementHook, serverPlacement } from "../core/placement.ts";
import type { BaseScripts } from "../core/base_script.ts";
import type { LoginCheck, LoginLimits } from "./login/mod.ts";
import type { SessionLimits } from "./entity/mod.ts";

/** How a baseapp serves clients; every field has a default. */
export interface BaseAppOptions {
  /** The game's entity types. */
  registry: EntityRegistry;
  /** Port of the client WebSocket endpoint (0 = a free one); it binds Config.host. */
  clientPort?: number;
  /** Create an account on its first login (default true; `--auto-accounts=false` forbids it). */
  autoCreateAccounts?: boolean;
  /** A custom login check run before the password check. */
  checkLogin?: LoginCheck | null;
  /** The entity type of a new account (default "Avatar"). */
  playerType?: string;
  /** The space of a new account's first login, and where a player goes whose space is gone (default 1). */
  defaultSpaceId?: number;
  /** Where in `defaultSpaceId` a new account's player first appears (default [0, 0, 0]). */
  spawnPoint?: Vec3Tuple;
  /** The game's say on where a login goes (core/placement.ts); the default lets a client choose nothing. */
  placement?: PlacementHook;
  /** Top speed of client-controlled movement in m/s (default 10). */
  maxSpeed?: number;
  /** Moves per second a client is expected to send (default 10); twice as many are dropped as abuse. */
  moveRate?: number;
  /** Milliseconds a proxy stays after its client went away (default 30,000). */
  disconnectGraceMs?: number;
  /** PBKDF2 iterations for new password hashes (default 100,000). */
  passwordIterations?: number;
  /** Login rate limits, back-off and the password hash queue (defaults: DEFAULT_LOGIN_LIMITS in login_guard.ts). */
  loginLimits?: Partial<LoginLimits>;
  /** The base script class of each entity type that has one (core/base_script.ts). */
  baseScripts?: BaseScripts;
  /** Milliseconds a base script's call to another process may take (default 5000). */
  callTimeoutMs?: number;
  limits?: Partial<SessionLimits>;
  /** Seconds between two saves of a logged-in entity, besides the save at logout (default 10). */
  autosaveSec?: number;
}

/** Session limits unless configured. */
export const DEFAULT_LIMITS: SessionLimits = {
  maxFrame: 64 * 1024,
  maxFrameBeforeLogin: 1024,
  abuseLimit: 10,
  loginTimeoutMs: 10_000,
  maxBuffered: 8 * 1024 * 1024,
};

/** The options a baseapp keeps, each given or its default. */
export type ResolvedOptions = Required<
  Omit<
    BaseAppOptions,
    "limits" | "registry" | "checkLogin" | "clientPort" | "loginLimits" | "autosaveSec" | "callTimeoutMs"
  >
>;

/** `opts` with the defaults of what it leaves out. */
export function resolveOptions(opts: BaseAppOptions): ResolvedOptions {
  return {
    autoCreateAccounts: opts.autoCreateAccounts ?? true,
    playerType: opts.playerType ?? "Avatar",
    defaultSpaceId: opts.defaultSpaceId ?? 1,
    spawnPoint: opts.spawnPoint ?? [0, 0, 0],
    placement: opts.placement ?? serverPlacement,
    maxSpeed: opts.maxSpeed ?? 10,
    moveRate: opts.moveRate ?? 10,
    disconnectGraceMs: opts.disconnectGraceMs ?? 30_000,
    passwordIterations: opts.passwordIterations ?? 100_000,
    baseScripts: opts.baseScripts ?? {},
  };
}
