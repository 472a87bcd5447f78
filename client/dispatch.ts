/**
 * The server's frames, read: session messages go to the part of the client they concern (the login, resuming,
 * the player, the client's events), AOI messages to the world model.
 */
import { errorText } from "../core/errors.ts";
import { ByteReader } from "../core/bytes/mod.ts";
import { readChange } from "../core/def/mod.ts";
import { poseDirection } from "../core/geo/mod.ts";
import {
  decodeArgs,
  MAX_SESSION_ID,
  readServerMessage,
  S2C,
  type ServerMessage,
  type Vec3Tuple,
} from "../core/proto/mod.ts";
import type { ClientEvents, Emitter, Vec3 } from "./events.ts";
import type { PlayerEntity } from "./player.ts";
import type { Resumer } from "./resume.ts";
import type { ClientStats } from "./transport.ts";
import type { ClientWorld } from "./world.ts";

/** The server's answer to a login (or a resume). */
export type LoginOk = Extract<ServerMessage, { id: typeof S2C.loginOk }>;

/** The client as the server's messages reach it: its counters, world model, player and events. */
export interface ReceivingClient extends Pick<Emitter<ClientEvents>, "emit"> {
  readonly stats: Pick<ClientStats, "messagesIn" | "aoiMessages" | "undecoded">;
  /** The world model AOI messages go to; null: they are only counted. */
  readonly world: ClientWorld | null;
  /** The player (from the login's answer on). */
  readonly player: PlayerEntity;
}

/** The parts of a client the server's messages go to. */
export interface Receiver {
  readonly client: ReceivingClient;
  readonly resume: Pick<Resumer, "noteToken" | "noteBaseApps" | "noteElsewhere">;
  /** The login (or resume) was taken. */
  loginOk(m: LoginOk): void;
  /** The login (or resume) was refused. */
  loginFailed(reason: string): void;
  /** The game was reloaded: its version and its definitions as JSON (client/definitions.ts). */
  definitions(version: string, json: string): void;
  /** The baseapp said the player is held by the baseapp at `url` (a login or resume goes there next). */
  elsewhere(url: string, reason: string): void;
}

/** Reads one frame from the server and hands each of its messages on. */
export function readFrame(bytes: Uint8Array, to: Receiver): void {
  const c = to.client;
  const r = new ByteReader(bytes);
  try {
    while (r.remaining > 0) {
      const id = r.u8();
      c.stats.messagesIn++;
      if (id <= MAX_SESSION_ID) onSession(readServerMessage(r, id), to);
      else {
        c.stats.aoiMessages++;
        if (!c.world) {
          c.stats.undecoded++;
          return;
        }
        c.world.handle(id, r);
      }
    }
    c.world?.flush();
  } catch (e) {
    c.stats.undecoded++;
    c.emit("error", 0, `undecodable frame from the server: ${errorText(e)}`, 0);
  }
}

function onSession(m: ServerMessage, to: Receiver): void {
  const c = to.client;
  switch (m.id) {
    case S2C.loginOk:
      to.loginOk(m);
      return;
    case S2C.loginFailed:
      to.loginFailed(m.reason);
      return;
    case S2C.resumeToken:
      to.resume.noteToken(m.token);
      return;
    case S2C.baseApps:
      to.resume.noteBaseApps(m.urls);
      return;
    case S2C.resumeElsewhere:
      to.elsewhere(m.url, m.reason);
      return;
    case S2C.error:
      c.emit("error", m.code, m.message, m.about);
      return;
    case S2C.forcedPosition:
      c.player.position = { x: m.pose.x, y: m.pose.y, z: m.pose.z };
      [c.player.yaw, c.player.pitch, c.player.roll] = poseDirection(m.pose);
      c.emit("forcedPosition", { x: m.pose.x, y: m.pose.y, z: m.pose.z }, poseDirection(m.pose));
      return;
    case S2C.baseProperty: {
      const rec = readChange(new ByteReader(m.change), c.player.type);
      c.player.container.apply(rec, false);
      const p = c.player.type.properties[rec.index];
      c.emit("playerProperty", p.name, c.player.container.get(p.name));
      return;
    }
    case S2C.baseClientCall: {
      const method = c.player.type.clientMethods[m.method];
      if (method) c.emit("playerMethod", method.name, decodeArgs(method, m.args));
      return;
    }
    case S2C.cellReady:
      c.player.spaceId = m.spaceId;
      c.player.position = vec(m.position);
      c.emit("cellReady", m.spaceId, vec(m.position));
      return;
    case S2C.cellGone:
      c.emit("cellGone", m.reason);
      return;
    case S2C.loggedOut:
      return;
    case S2C.definitions:
      try {
        to.definitions(m.version, m.registry);
      } catch (e) {
        c.emit("error", 0, `the server's new definitions (${m.version}) cannot be used: ${errorText(e)}`, 0);
      }
      return;
  }
}

function vec(v: Vec3Tuple): Vec3 {
  return { x: v[0], y: v[1], z: v[2] };
}
