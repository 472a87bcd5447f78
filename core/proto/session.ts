/**
 * The session part of the client protocol (message codes 1-31): login, the player's base entity, calls and movement.
 * A WebSocket binary frame holds a sequence of messages `[u8 code][fields]`; codes 32-95 are the AoI part (aoi.ts),
 * and a frame may mix both. Each message is one entry below: to add one, add its entry to CLIENT_MESSAGES (client to
 * server) or SERVER_MESSAGES (server to client) with an unused code; its encoding, decoding and type follow.
 */
import { ByteReader, ByteWriter } from "../bytes/mod.ts";
import {
  byCode,
  codes,
  type Decoded,
  message,
  type MessageSpec,
  readMessage,
  writeMessage,
  type Written,
} from "./declare.ts";
import { ErrorCode, ProtocolError } from "./errors.ts";
import {
  blob,
  entityId,
  pose,
  positionOrNone,
  shortString,
  spaceOrNone,
  string,
  stringList,
  u8,
  varint,
  vec3,
} from "./fields.ts";

/** Longest resume token accepted (a token is well under this). */
export const MAX_TOKEN = 512;

/** Most baseapp URLs a baseApps message carries. */
export const MAX_BASEAPP_URLS = 256;

/** Highest session message code; codes above belong to the AoI protocol. */
export const MAX_SESSION_ID = 31;

/** Messages a client sends. */
export const CLIENT_MESSAGES = {
  /** A name, a password, the space asked for (or none) and a position in it (or none). */
  login: message(1, "login", { name: string, password: string, spaceId: spaceOrNone, position: positionOrNone }),
  /** The client is ready for AoI messages. */
  enableEntities: message(2, "enableEntities", {}),
  /** A base method of the player. */
  callBase: message(3, "callBase", { method: varint, args: blob }),
  /** A cell method of the player or of an entity it sees. */
  callCell: message(4, "callCell", { target: entityId, typeId: varint, method: varint, args: blob }),
  /** Where the player is and faces. */
  position: message(5, "position", { pose }),
  logout: message(6, "logout", {}),
  /** Instead of a login after a lost connection: takes the player back with the resume token its last login gave. */
  resume: message(7, "resume", { token: shortString(MAX_TOKEN) }),
} as const;

/** Session messages the baseapp sends. */
export const SERVER_MESSAGES = {
  loginOk: message(16, "loginOk", { entityId: varint, typeId: varint, ownState: blob }),
  loginFailed: message(17, "loginFailed", { reason: string }),
  /** The answer to bad input: an error code, the code of the message it is about (0: none), and why. */
  error: message(18, "error", { code: varint, about: u8, message: string }),
  /** The server put the player elsewhere (a correction, a teleport). */
  forcedPosition: message(19, "forcedPosition", { pose }),
  /** A change of one of the player's base properties the own client sees (BASE_AND_CLIENT). */
  baseProperty: message(20, "baseProperty", { change: blob }),
  /** A client method of the player, called by its base. */
  baseClientCall: message(21, "baseClientCall", { method: varint, args: blob }),
  /** The player's cell entity exists: space id and position. */
  cellReady: message(22, "cellReady", { spaceId: varint, position: vec3 }),
  /** The player's cell entity is gone (its space shut down). */
  cellGone: message(23, "cellGone", { reason: string }),
  /** The logout is written; the server closes the connection next. */
  loggedOut: message(24, "loggedOut", {}),
  /** A signed, single-use token that resumes this player after a lost connection (C2S.resume); replaces the last. */
  resumeToken: message(25, "resumeToken", { token: string }),
  /** The client URLs of the live baseapps, where it may resume when its own is lost; sent at login and on a change. */
  baseApps: message(26, "baseApps", { urls: stringList(MAX_BASEAPP_URLS) }),
  /**
   * The answer to a resume (or a login) on a baseapp that does not hold the player: the baseapp at `url` does. The
   * token is not used up; the server closes the connection next, and the client resumes (or logs in) there.
   */
  resumeElsewhere: message(27, "resumeElsewhere", { url: string, reason: string }),
  /**
   * The game was reloaded (docs/game.md, "Reloading a game"): its version and its definitions as JSON
   * (describeRegistry); the SDK adds what is new to its registry.
   */
  definitions: message(28, "definitions", { version: string, registry: string }),
} as const;

/** Codes of the messages a client sends, by name. */
export const C2S = codes(CLIENT_MESSAGES);

/** Codes of the session messages the baseapp sends, by name. */
export const S2C = codes(SERVER_MESSAGES);

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

type Flat<T> = { [K in keyof T]: T[K] };
type ClientSpecs = typeof CLIENT_MESSAGES;
type ServerSpecs = typeof SERVER_MESSAGES;

/** A message from a client, as encoding takes it. */
export type ClientMessageIn = {
  [N in keyof ClientSpecs]: Flat<{ readonly id: ClientSpecs[N]["code"] } & Written<ClientSpecs[N]>>;
}[keyof ClientSpecs];

/** A message from a client, decoded. */
export type ClientMessage = {
  [N in keyof ClientSpecs]: Flat<{ id: ClientSpecs[N]["code"] } & Decoded<ClientSpecs[N]>>;
}[keyof ClientSpecs];

/** A session message from the server, as encoding takes it. */
export type ServerMessageIn = {
  [N in keyof ServerSpecs]: Flat<{ readonly id: ServerSpecs[N]["code"] } & Written<ServerSpecs[N]>>;
}[keyof ServerSpecs];

/** A session message from the server, decoded. */
export type ServerMessage = {
  [N in keyof ServerSpecs]: Flat<{ id: ServerSpecs[N]["code"] } & Decoded<ServerSpecs[N]>>;
}[keyof ServerSpecs];

const clientByCode = byCode(CLIENT_MESSAGES);
const serverByCode = byCode(SERVER_MESSAGES);

function spec(table: (MessageSpec | undefined)[], id: number, what: string): MessageSpec {
  const s = table[id];
  if (!s) throw new ProtocolError(ErrorCode.unknownMessage, `unknown ${what} message id ${id}`);
  return s;
}

/** Writes one client message (including its code). */
export function writeClientMessage(w: ByteWriter, m: ClientMessageIn): void {
  writeMessage(w, spec(clientByCode, m.id, "client"), m);
}

/**
 * Reads the client message whose code was just read. Throws ProtocolError naming the message and field:
 * unknownMessage for a code that is not a client message, malformed for a truncated or invalid payload, or the code
 * a field's check gives (badArguments, badPosition).
 */
export function readClientMessage(r: ByteReader, id: number): ClientMessage {
  return readMessage(r, spec(clientByCode, id, "client"), null, "id") as ClientMessage;
}

/** Writes one session message from the server (including its code). */
export function writeServerMessage(w: ByteWriter, m: ServerMessageIn): void {
  writeMessage(w, spec(serverByCode, m.id, "session"), m);
}

/** Reads the session message whose code was just read; throws ProtocolError as readClientMessage does. */
export function readServerMessage(r: ByteReader, id: number): ServerMessage {
  return readMessage(r, spec(serverByCode, id, "session"), null, "id") as ServerMessage;
}

/** One message as bytes (a frame may concatenate several). */
export function encodeServerMessage(m: ServerMessageIn): Uint8Array {
  const w = new ByteWriter(64);
  writeServerMessage(w, m);
  return w.toBytes();
}

/** One client message as bytes. */
export function encodeClientMessage(m: ClientMessageIn): Uint8Array {
  const w = new ByteWriter(64);
  writeClientMessage(w, m);
  return w.toBytes();
}

/** Decodes one client message from `bytes` (code first); throws ProtocolError as readClientMessage does. */
export function decodeClientMessage(bytes: Uint8Array): ClientMessage {
  const r = new ByteReader(bytes);
  return readClientMessage(r, r.u8());
}
