/**
 * The session part of the client protocol (message ids 1-31): login, the
 * player's base entity, calls and movement. A WebSocket binary frame holds a
 * sequence of messages `[u8 id][payload]`, little-endian, with varints and
 * strings as ByteWriter writes them. Ids 32-95 are AOI messages written by the
 * witness (aoi_protocol.ts); a frame may mix both kinds.
 */
import { errorText } from "../errors.ts";
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import type { MethodDef } from "./model.ts";
import { ValueError } from "./errors.ts";
import { MAX_ENTITY_ID } from "../bytes/mod.ts";
import { withinWorld } from "../geo/rect.ts";

/** Messages a client sends. */
export const C2S = {
  login: 1,
  enableEntities: 2,
  callBase: 3,
  callCell: 4,
  position: 5,
  logout: 6,
  /** Instead of a login after a lost connection: takes the player back with the resume token its last login gave. */
  resume: 7,
} as const;

/** Session messages the baseapp sends. */
export const S2C = {
  loginOk: 16,
  loginFailed: 17,
  error: 18,
  forcedPosition: 19,
  /** A change of one of the player's base properties the own client sees (BASE_AND_CLIENT). */
  baseProperty: 20,
  /** A client method of the player, called by its base. */
  baseClientCall: 21,
  /** The player's cell entity exists: space id and position. */
  cellReady: 22,
  /** The player's cell entity is gone (its space shut down). */
  cellGone: 23,
  /** The logout is written; the server closes the connection next. */
  loggedOut: 24,
  /** A signed, single-use token that resumes this player after a lost connection (C2S.resume); replaces the last. */
  resumeToken: 25,
  /** The client URLs of the live baseapps, where it may resume when its own is lost; sent at login and on a change. */
  baseApps: 26,
  /**
   * The answer to a resume (or a login) on a baseapp that does not hold the player: the baseapp at `url` does. The
   * token is not used up; the server closes the connection next, and the client resumes (or logs in) there.
   */
  resumeElsewhere: 27,
} as const;

/** WebSocket close codes the server uses that the SDK acts on. */
export const CloseCode = {
  /** After resumeElsewhere: the player is on another baseapp (the resume token still good): resume or log in there. */
  resumeElsewhere: 4010,
  /**
   * This baseapp was declared dead while it stalled, and its players were restored on other baseapps: the client
   * resumes there, as after a lost connection.
   */
  baseAppFenced: 4011,
} as const;

/** Most baseapp URLs a baseApps message carries. */
export const MAX_BASEAPP_URLS = 256;

/** Longest resume token accepted (a token is well under this). */
export const MAX_TOKEN = 512;

/** Highest session message id; ids above belong to the AOI protocol. */
export const MAX_SESSION_ID = 31;

/** Error codes of the `error` message (the reply to any bad input). */
export const ErrorCode = {
  unknownMessage: 1,
  notLoggedIn: 2,
  malformed: 3,
  unknownMethod: 4,
  notExposed: 5,
  badArguments: 6,
  frameTooLarge: 7,
  tooFast: 8,
  noCell: 9,
  alreadyLoggedIn: 10,
  tooManyErrors: 11,
  badPosition: 12,
  textFrame: 13,
  serverError: 14,
  loggedInElsewhere: 15,
  rateLimited: 16,
  /** A call went to a cellapp that died before a backup held it, and was not carried out again (docs/faults.md, "Confirmed means durable"). */
  callLost: 17,
} as const;

/** One of the error codes. */
export type ErrorCodeValue = typeof ErrorCode[keyof typeof ErrorCode];

/** Position and direction as sent: [x, y, z] and [yaw, pitch, roll]. */
export type Vec3Tuple = [number, number, number];

/** A message from a client, decoded. */
export type ClientMessage =
  | { id: typeof C2S.login; name: string; password: string; spaceId: number | null; position: Vec3Tuple | null }
  | { id: typeof C2S.enableEntities }
  | { id: typeof C2S.callBase; method: number; args: Uint8Array }
  | { id: typeof C2S.callCell; target: number; typeId: number; method: number; args: Uint8Array }
  | { id: typeof C2S.position; position: Vec3Tuple; direction: Vec3Tuple }
  | { id: typeof C2S.logout }
  | { id: typeof C2S.resume; token: string };

/** A session message from the server, decoded. */
export type ServerMessage =
  | { id: typeof S2C.loginOk; entityId: number; typeId: number; ownState: Uint8Array }
  | { id: typeof S2C.loginFailed; reason: string }
  | { id: typeof S2C.error; code: number; about: number; message: string }
  | { id: typeof S2C.forcedPosition; position: Vec3Tuple; direction: Vec3Tuple }
  | { id: typeof S2C.baseProperty; change: Uint8Array }
  | { id: typeof S2C.baseClientCall; method: number; args: Uint8Array }
  | { id: typeof S2C.cellReady; spaceId: number; position: Vec3Tuple }
  | { id: typeof S2C.cellGone; reason: string }
  | { id: typeof S2C.loggedOut }
  | { id: typeof S2C.resumeToken; token: string }
  | { id: typeof S2C.baseApps; urls: string[] }
  | { id: typeof S2C.resumeElsewhere; url: string; reason: string };

/** Raised for a message that cannot be decoded; `code` is the error code to answer with. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
  constructor(readonly code: ErrorCodeValue, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

function vec(w: ByteWriter, v: readonly number[]): void {
  w.f32(v[0]);
  w.f32(v[1]);
  w.f32(v[2]);
}

function readVec(r: ByteReader): Vec3Tuple {
  return [r.f32(), r.f32(), r.f32()];
}

/** Writes one client message (including its id byte). */
export function writeClientMessage(w: ByteWriter, m: ClientMessage): void {
  w.u8(m.id);
  switch (m.id) {
    case C2S.login:
      w.string(m.name);
      w.string(m.password);
      w.varint(m.spaceId === null ? 0 : m.spaceId + 1);
      w.u8(m.position ? 1 : 0);
      if (m.position) vec(w, m.position);
      return;
    case C2S.callBase:
      w.varint(m.method);
      w.blob(m.args);
      return;
    case C2S.callCell:
      w.varint(m.target);
      w.varint(m.typeId);
      w.varint(m.method);
      w.blob(m.args);
      return;
    case C2S.position:
      vec(w, m.position);
      vec(w, m.direction);
      return;
    case C2S.resume:
      w.string(m.token);
      return;
  }
}

/**
 * Reads the client message whose id byte was just read. Throws ProtocolError
 * (unknownMessage for an id that is not a client message, malformed for a
 * truncated or invalid payload).
 */
export function readClientMessage(r: ByteReader, id: number): ClientMessage {
  try {
    switch (id) {
      case C2S.login: {
        const name = r.string();
        const password = r.string();
        const space = r.varint();
        const hasPos = r.u8();
        const position = hasPos ? readVec(r) : null;
        if (space > 2 ** 32) throw new ProtocolError(ErrorCode.badArguments, `login: no space ${space - 1}`);
        if (position && !withinWorld(position)) {
          throw new ProtocolError(ErrorCode.badPosition, `login: position ${position} is not within the world`);
        }
        return { id, name, password, spaceId: space === 0 ? null : space - 1, position };
      }
      case C2S.enableEntities:
      case C2S.logout:
        return { id };
      case C2S.callBase:
        return { id, method: r.varint(), args: r.blob() };
      case C2S.callCell: {
        const m = { id, target: r.varint(), typeId: r.varint(), method: r.varint(), args: r.blob() } as const;
        if (m.target < 1 || m.target > MAX_ENTITY_ID) {
          throw new ProtocolError(ErrorCode.badArguments, `callCell: no entity ${m.target}`);
        }
        return m;
      }
      case C2S.position:
        return { id, position: readVec(r), direction: readVec(r) };
      case C2S.resume: {
        const token = r.string();
        if (token.length > MAX_TOKEN) throw new ProtocolError(ErrorCode.badArguments, "resume: token too long");
        return { id, token };
      }
    }
  } catch (e) {
    if (e instanceof ProtocolError) throw e;
    throw new ProtocolError(ErrorCode.malformed, `malformed message ${id}: ${errorText(e)}`, { cause: e });
  }
  throw new ProtocolError(ErrorCode.unknownMessage, `unknown message id ${id}`);
}

/** Writes one session message from the server (including its id byte). */
export function writeServerMessage(w: ByteWriter, m: ServerMessage): void {
  w.u8(m.id);
  switch (m.id) {
    case S2C.loginOk:
      w.varint(m.entityId);
      w.varint(m.typeId);
      w.blob(m.ownState);
      return;
    case S2C.loginFailed:
    case S2C.cellGone:
      w.string(m.reason);
      return;
    case S2C.resumeToken:
      w.string(m.token);
      return;
    case S2C.baseApps:
      w.varint(m.urls.length);
      for (const u of m.urls) w.string(u);
      return;
    case S2C.resumeElsewhere:
      w.string(m.url);
      w.string(m.reason);
      return;
    case S2C.error:
      w.varint(m.code);
      w.u8(m.about);
      w.string(m.message);
      return;
    case S2C.forcedPosition:
      vec(w, m.position);
      vec(w, m.direction);
      return;
    case S2C.baseProperty:
      w.blob(m.change);
      return;
    case S2C.baseClientCall:
      w.varint(m.method);
      w.blob(m.args);
      return;
    case S2C.cellReady:
      w.varint(m.spaceId);
      vec(w, m.position);
      return;
  }
}

/** Reads the session message whose id byte was just read; throws ProtocolError for other ids. */
export function readServerMessage(r: ByteReader, id: number): ServerMessage {
  switch (id) {
    case S2C.loginOk:
      return { id, entityId: r.varint(), typeId: r.varint(), ownState: r.blob() };
    case S2C.loginFailed:
    case S2C.cellGone:
      return { id, reason: r.string() };
    case S2C.error:
      return { id, code: r.varint(), about: r.u8(), message: r.string() };
    case S2C.forcedPosition:
      return { id, position: readVec(r), direction: readVec(r) };
    case S2C.baseProperty:
      return { id, change: r.blob() };
    case S2C.baseClientCall:
      return { id, method: r.varint(), args: r.blob() };
    case S2C.cellReady:
      return { id, spaceId: r.varint(), position: readVec(r) };
    case S2C.loggedOut:
      return { id };
    case S2C.resumeToken:
      return { id, token: r.string() };
    case S2C.baseApps: {
      const n = r.varint();
      if (n > MAX_BASEAPP_URLS) throw new ProtocolError(ErrorCode.malformed, `baseApps with ${n} URLs`);
      const urls: string[] = [];
      for (let i = 0; i < n; i++) urls.push(r.string());
      return { id, urls };
    }
    case S2C.resumeElsewhere:
      return { id, url: r.string(), reason: r.string() };
  }
  throw new ProtocolError(ErrorCode.unknownMessage, `unknown session message id ${id}`);
}

/** One message as bytes (a frame may concatenate several). */
export function encodeServerMessage(m: ServerMessage): Uint8Array {
  const w = new ByteWriter(64);
  writeServerMessage(w, m);
  return w.toBytes();
}

/** One client message as bytes. */
export function encodeClientMessage(m: ClientMessage): Uint8Array {
  const w = new ByteWriter(64);
  writeClientMessage(w, m);
  return w.toBytes();
}

/**
 * Encodes a method's arguments by their declared types; throws ValueError
 * naming the method and argument when one does not fit or the count is wrong.
 */
export function encodeArgs(method: MethodDef, args: readonly unknown[]): Uint8Array {
  if (args.length !== method.args.length) {
    throw new ValueError(`${method.name} takes ${method.args.length} argument(s), got ${args.length}`);
  }
  const w = new ByteWriter(32);
  method.args.forEach((a, i) => {
    let v: unknown;
    try {
      v = a.type.coerce(args[i]);
    } catch (e) {
      throw new ValueError(`${method.name} argument ${a.name ?? i}: ${errorText(e)}`, { cause: e });
    }
    a.type.write(w, v);
  });
  return w.toBytes();
}

/**
 * Decodes a method's arguments and checks each against its declared type.
 * Throws ProtocolError(badArguments) when the bytes are short, too long, or
 * hold a value the type refuses.
 */
export function decodeArgs(method: MethodDef, bytes: Uint8Array): unknown[] {
  const r = new ByteReader(bytes);
  const out: unknown[] = [];
  for (let i = 0; i < method.args.length; i++) {
    const a = method.args[i];
    try {
      out.push(a.type.coerce(a.type.read(r)));
    } catch (e) {
      throw new ProtocolError(
        ErrorCode.badArguments,
        `${method.name} argument ${a.name ?? i} (${a.type.name}): ${errorText(e)}`,
        { cause: e },
      );
    }
  }
  if (r.remaining !== 0) {
    throw new ProtocolError(
      ErrorCode.badArguments,
      `${method.name} takes ${method.args.length} argument(s); ${r.remaining} byte(s) left over`,
    );
  }
  return out;
}
