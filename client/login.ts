/**
 * Logging in: what a client is given (credentials, how to connect), the login message it sends, and the wait for
 * the server's answer.
 */
import type { EntityRegistry } from "../core/def/mod.ts";
import { C2S, type ClientMessage } from "../core/proto/mod.ts";
import type { Vec3 } from "./events.ts";
import type { ResumeOptions } from "./resume.ts";

/** Account name, password, and where the player would like to appear. */
export interface Credentials {
  /** The account name. */
  name: string;
  /** The account's password. */
  password: string;
  /**
   * A space to enter and a position in it: a request the server grants only
   * when the game lets clients choose (or with a baseapp's
   * `--client-spawn`); otherwise the server decides (the saved place,
   * else the default space's spawn point). `cellReady` says where it was.
   */
  spaceId?: number;
  /** The position (metres) asked for in `spaceId`; see `spaceId`. */
  position?: Vec3;
}

/** How to connect. */
export interface ConnectOptions {
  /** The game's entity definitions (the same the server runs). */
  registry: EntityRegistry;
  /**
   * Decode AOI traffic into `entities` (default true); false only counts it. Such a client answers no enter (with
   * the request for the entity's state): the server sends it nothing of an entering entity until its request
   * timeout (5 s) passes, then the whole entity: less, and other, traffic than a player's client gets.
   */
  decodeAoi?: boolean;
  /**
   * Raise enter, leave, move, property, detailLevel and clientMethod events for the entities in the AoI (default
   * true). false keeps the world model (it answers enters, so the server sends what a real client gets) without
   * events: the cheapest client that still loads the server as a player does, for load generators.
   */
  aoiEvents?: boolean;
  /**
   * Keep the AoI's entities' positions and directions (default true). false steps over their moves unread (the
   * entities keep the pose they entered with, and no move event is raised) while still answering enters, so the server
   * sends what it sends a player's client: for load generators whose clients do not look.
   */
  aoiMoves?: boolean;
  /** Send enableEntities right after login (default true). */
  enableEntities?: boolean;
  /** Give up on the login after this long (default 15,000 ms). */
  timeoutMs?: number;
  /**
   * After a lost connection (closed without a close frame: the baseapp died, the network dropped), take the
   * player back with the resume token of the last login, no password: `urls` are the baseapps' client URLs to try
   * in turn (default: the one connected to, then the live baseapps the server listed), for at most `withinMs`
   * (default 30,000). false: a lost connection is
   * the end.
   */
  resume?: ResumeOptions | false;
}

/** The login was refused; `reason` is the server's. */
export class LoginError extends Error {
  /** Always "LoginError". */
  override name = "LoginError";
}

/** The message that logs in with `creds`. */
export function loginMessage(creds: Credentials): ClientMessage {
  const p = creds.position;
  return {
    id: C2S.login,
    name: creds.name,
    password: creds.password,
    spaceId: creds.spaceId ?? null,
    position: p ? [p.x, p.y, p.z] : null,
  };
}

/** A login waiting for the server's answer. */
export interface PendingLogin {
  resolve(): void;
  reject(e: Error): void;
}

/**
 * Waits for the answer to a login `start` sends: resolves with `value` when the pending login it is given is
 * resolved, rejects when it is rejected, or after `timeoutMs` (then calls `onTimeout`).
 */
export function awaitLogin<T>(
  url: string,
  timeoutMs: number,
  value: T,
  onTimeout: () => void,
  start: (pending: PendingLogin) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`no login reply from ${url} within ${timeoutMs} ms`));
      onTimeout();
    }, timeoutMs);
    start({
      resolve: () => {
        clearTimeout(timer);
        resolve(value);
      },
      reject: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
}
