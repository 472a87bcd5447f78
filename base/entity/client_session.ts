/**
 * One client connection on the baseapp's WebSocket endpoint: reads frames of
 * client messages, checks every message against the definitions before it
 * goes anywhere, answers bad input with an error and drops it, and
 * disconnects a client whose bad input passes the abuse threshold. Outgoing
 * messages written in one turn of the event loop leave in one frame.
 */
import { errorText } from "../../core/errors.ts";
import { ByteReader } from "../../core/bytes/mod.ts";
import type { EntityRegistry } from "../../core/def/mod.ts";
import {
  C2S,
  type ClientMessage,
  CloseCode,
  decodeArgs,
  encodeServerMessage,
  ErrorCode,
  type ErrorCodeValue,
  ProtocolError,
  readClientMessage,
  S2C,
  type ServerMessage,
} from "../../core/proto/mod.ts";
import { AOI_MSG, readRequestUpdate } from "../../core/proto/mod.ts";
import { type Logger, Throttle } from "../../core/log.ts";
import type { WsConn } from "../../core/ws/mod.ts";
import type { ClientLink, Proxy } from "./proxy.ts";

/** Limits of a client connection. */
export interface SessionLimits {
  /** Largest frame accepted once logged in, in bytes; a bigger one closes the connection with 1009. */
  maxFrame: number;
  /** Largest frame accepted before the login succeeded (a login message is small). */
  maxFrameBeforeLogin: number;
  /** Abuse score at which the client is disconnected; each bad message adds 1, and 1 leaks away per second. */
  abuseLimit: number;
  /** A connection that has not logged in by then is closed. */
  loginTimeoutMs: number;
  /** Bytes queued for a slow client before it is disconnected. */
  maxBuffered: number;
}

/** A resume answered with where the player is: the client URL of the baseapp holding it, and why. */
export interface ResumeElsewhere {
  url: string;
  reason: string;
}

/** What a session asks of its baseapp. */
export interface SessionHost {
  readonly registry: EntityRegistry;
  readonly log: Logger;
  readonly limits: SessionLimits;
  /**
   * Logs in and attaches the session to the account's proxy; resolves with the reason on failure, or with the client
   * URL of the baseapp that holds the account's base (the client logs in there).
   */
  login(
    session: ClientSession,
    m: Extract<ClientMessage, { id: typeof C2S.login }>,
  ): Promise<string | ResumeElsewhere | null>;
  /**
   * Takes the player of a resume token back; resolves with the reason on failure (like `login`), or with the client
   * URL of the baseapp that holds the player (the token unused there).
   */
  resume(
    session: ClientSession,
    m: Extract<ClientMessage, { id: typeof C2S.resume }>,
  ): Promise<string | ResumeElsewhere | null>;
  closed(session: ClientSession): void;
}

type State = "new" | "loggingIn" | "online" | "closed";

/** One client's WebSocket connection. */
export class ClientSession implements ClientLink {
  state: State = "new";
  proxy: Proxy | null = null;
  readonly stats = { framesIn: 0, bytesIn: 0, framesOut: 0, bytesOut: 0, errors: 0 };
  readonly #out: Uint8Array[] = [];
  #outBytes = 0;
  #flushQueued = false;
  #flushTask = () => this.flush();
  #abuse = 0;
  #abuseAt = performance.now();
  #loginTimer: ReturnType<typeof setTimeout> | undefined;
  #log: Logger;
  /** What goes wrong for this client is logged at most once a minute: a client must not flood the logs. */
  #logged = new Throttle(60_000);

  constructor(private readonly ws: WsConn, readonly remote: string, private readonly host: SessionHost) {
    this.#log = host.log.child(`[client ${remote}]`);
    ws.maxMessage = Math.min(host.limits.maxFrameBeforeLogin, host.limits.maxFrame);
    ws.onMessage = (data, binary) => this.#onFrame(data, binary);
    ws.onClose = (code, reason) => {
      if (this.state !== "closed") this.#log.debug(`connection closed: ${code} ${reason}`);
      this.#onClosed();
    };
    this.#loginTimer = setTimeout(() => {
      if (this.state === "new" || this.state === "loggingIn") {
        this.close(`no login within ${host.limits.loginTimeoutMs} ms`, 4008);
      }
    }, host.limits.loginTimeoutMs);
  }

  /** True once the connection is closed (or closing). */
  get isClosed(): boolean {
    return this.state === "closed";
  }

  /** Queues client-protocol bytes; everything queued in this turn leaves as one frame. */
  send(bytes: Uint8Array): void {
    if (this.state === "closed" || bytes.length === 0) return;
    this.#out.push(bytes);
    this.#outBytes += bytes.length;
    if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(this.#flushTask);
    }
  }

  /** Queues one session message. */
  sendMessage(m: ServerMessage): void {
    this.send(encodeServerMessage(m));
  }

  /** ClientLink: the server refused a request of this client elsewhere (a cell, a base script): reply, count it as abuse. */
  refused(code: ErrorCodeValue, about: number, message: string): void {
    if (this.state === "closed") return;
    this.logOnce(`refused: ${message}`, "info");
    this.#bad(code, about, message);
  }

  /** Logs a line about this client, unless one was logged within the last minute (then counts it). */
  logOnce(line: string, level: "info" | "warn" | "error" = "error"): void {
    const held = this.#logged.take(0);
    if (held !== null) this.#log[level](line + Throttle.note(held));
  }

  /** The reply to bad input. */
  error(code: ErrorCodeValue, about: number, message: string): void {
    this.stats.errors++;
    this.sendMessage({ id: S2C.error, code, about, message: message.slice(0, 500) });
  }

  /** Sends what is queued as one binary frame. */
  flush(): void {
    this.#flushQueued = false;
    if (this.#out.length === 0 || !this.ws.isOpen) return;
    // The connection copies the parts into its write buffer: they need not be joined first. This runs at the end of
    // the turn already: the connection need not wait for another.
    this.ws.writeParts(this.#out);
    this.stats.framesOut++;
    this.stats.bytesOut += this.#outBytes;
    this.#out.length = 0;
    this.#outBytes = 0;
    if (this.ws.bufferedAmount > this.host.limits.maxBuffered) {
      this.close(`client too slow: ${this.ws.bufferedAmount} bytes waiting`, 1013);
    }
  }

  /** Closes the connection after what is queued; `code` is the WebSocket close code. */
  close(reason: string, code = 1000): void {
    if (this.state === "closed") return;
    this.flush();
    this.#log.debug(`closing: ${reason}`);
    this.#onClosed();
    // The close frame goes after what flush() queued; the connection cuts the reason to fit a close frame.
    this.ws.close(code, reason);
  }

  #onClosed(): void {
    if (this.state === "closed") return;
    this.state = "closed";
    clearTimeout(this.#loginTimer);
    this.proxy?.detach(this);
    this.host.closed(this);
  }

  /** Counts one bad message; over the threshold the client is disconnected. Returns false when it was. */
  #abused(weight = 1): boolean {
    const now = performance.now();
    this.#abuse = Math.max(0, this.#abuse - (now - this.#abuseAt) / 1000) + weight;
    this.#abuseAt = now;
    if (this.#abuse < this.host.limits.abuseLimit) return true;
    this.error(ErrorCode.tooManyErrors, 0, "too many bad messages; disconnecting");
    this.close("too many bad messages", 1008);
    return false;
  }

  #bad(code: ErrorCodeValue, about: number, message: string, abuse = true): boolean {
    this.#log.debug(`bad input: ${message}`);
    this.error(code, about, message);
    return abuse ? this.#abused() : true;
  }

  /** One message of the connection; its size is already within the connection's limit. */
  #onFrame(bytes: Uint8Array, binary: boolean): void {
    if (this.state === "closed") return;
    if (!binary) {
      this.#bad(ErrorCode.textFrame, 0, "text frames are not accepted; send binary frames");
      return;
    }
    this.stats.framesIn++;
    this.stats.bytesIn += bytes.length;
    const r = new ByteReader(bytes);
    let aoiFrom = -1, aoiTo = -1;
    while (r.remaining > 0 && !this.isClosed) {
      const at = r.pos;
      const id = r.u8();
      if (id === AOI_MSG.requestUpdate) {
        // The AOI protocol's one client message goes to the witness as it is, in runs of the frame.
        if (!this.#requestUpdate(r, at)) return;
        if (aoiTo !== at) {
          this.#forwardAoi(bytes, aoiFrom, aoiTo);
          aoiFrom = at;
        }
        aoiTo = r.pos;
        continue;
      }
      let m: ClientMessage;
      try {
        m = readClientMessage(r, id);
      } catch (e) {
        // The rest of the frame cannot be framed without this message's length.
        const err = e as ProtocolError;
        this.#bad(err.code ?? ErrorCode.malformed, id, err.message);
        return;
      }
      try {
        if (!this.#dispatch(m)) return;
      } catch (e) {
        if (!(e instanceof ProtocolError)) {
          this.logOnce(`message ${id} failed: ${errorText(e, { stack: true })}`);
          this.error(ErrorCode.serverError, id, `the server failed to handle message ${id}`);
          continue;
        }
        if (!this.#bad(e.code, id, e.message)) return;
      }
    }
    this.#forwardAoi(bytes, aoiFrom, aoiTo);
  }

  /**
   * Checks a requestUpdate as its declaration reads it (core/proto AOI_MESSAGES); false when the client was dropped.
   */
  #requestUpdate(r: ByteReader, at: number): boolean {
    try {
      if (this.state !== "online" || !this.proxy) throw new ProtocolError(ErrorCode.notLoggedIn, "log in first");
      readRequestUpdate(r);
      return true;
    } catch (e) {
      const err = e instanceof ProtocolError ? e : new ProtocolError(ErrorCode.malformed, errorText(e), { cause: e });
      this.#bad(err.code, AOI_MSG.requestUpdate, `bad requestUpdate at byte ${at}: ${err.message}`);
      return false;
    }
  }

  #forwardAoi(bytes: Uint8Array, from: number, to: number): void {
    if (from >= 0 && to > from && this.proxy) this.proxy.forwardAoi(bytes.slice(from, to));
  }

  /** Handles one decoded message; returns false when the connection was closed. */
  #dispatch(m: ClientMessage): boolean {
    if (m.id === C2S.login || m.id === C2S.resume) {
      if (this.state !== "new") {
        return this.#bad(ErrorCode.alreadyLoggedIn, m.id, "already logged in (or logging in) on this connection");
      }
      this.state = "loggingIn";
      const who = m.id === C2S.login ? `login of "${m.name}"` : "resume";
      (m.id === C2S.login ? this.host.login(this, m) : this.host.resume(this, m)).then((reason) => {
        if (reason === null) {
          clearTimeout(this.#loginTimer);
          this.ws.maxMessage = this.host.limits.maxFrame;
          return;
        }
        if (typeof reason === "object") {
          this.sendMessage({ id: S2C.resumeElsewhere, url: reason.url, reason: reason.reason });
          this.close(
            `${m.id === C2S.login ? "log in" : "resume"} elsewhere: ${reason.reason}`,
            CloseCode.resumeElsewhere,
          );
          return;
        }
        this.sendMessage({ id: S2C.loginFailed, reason });
        this.close(`login failed: ${reason}`, 4001);
      }, (e) => {
        this.#log.error(`${who} failed: ${errorText(e, { stack: true })}`);
        this.sendMessage({ id: S2C.loginFailed, reason: `server error: ${errorText(e)}` });
        this.close("login failed", 1011);
      });
      return true;
    }
    const p = this.proxy;
    if (this.state !== "online" || !p) {
      return this.#bad(ErrorCode.notLoggedIn, m.id, "log in first");
    }
    switch (m.id) {
      case C2S.enableEntities:
        p.enableEntities();
        return true;
      case C2S.position: {
        const bad = p.move(m.pose);
        return bad ? this.#bad(bad.code, m.id, bad.message, bad.abuse) : true;
      }
      case C2S.callBase: {
        const method = p.type.baseMethods[m.method];
        checkMethod(method, p.type.name, "base", m.method);
        const args = decodeArgs(method, m.args);
        p.callBase(method.name, args).catch((e) => {
          this.logOnce(`${p.type.name}.${method.name} failed: ${errorText(e, { stack: true })}`);
          this.refused(ErrorCode.serverError, m.id, `${method.name} failed on the server: ${errorText(e)}`);
        });
        return true;
      }
      case C2S.callCell: {
        const type = this.host.registry.types[m.typeId];
        if (!type) throw new ProtocolError(ErrorCode.unknownMethod, `unknown entity type id ${m.typeId}`);
        if (m.target === p.id && type !== p.type) {
          throw new ProtocolError(ErrorCode.unknownMethod, `entity ${p.id} is a ${p.type.name}, not a ${type.name}`);
        }
        const method = type.cellMethods[m.method];
        checkMethod(method, type.name, "cell", m.method);
        decodeArgs(method, m.args);
        const bad = p.callCell(m.target, m.typeId, m.method, m.args);
        return bad ? this.#bad(bad.code, m.id, bad.message, false) : true;
      }
      case C2S.logout:
        p.logout().catch((e) => this.#log.error(`logout failed: ${errorText(e)}`));
        return true;
    }
    return true;
  }
}

function checkMethod(
  method: { name: string; exposed: boolean } | undefined,
  type: string,
  kind: string,
  index: number,
): asserts method {
  if (!method) throw new ProtocolError(ErrorCode.unknownMethod, `${type} has no ${kind} method ${index}`);
  if (!method.exposed) {
    throw new ProtocolError(ErrorCode.notExposed, `${type}.${method.name} is not exposed to clients`);
  }
}
