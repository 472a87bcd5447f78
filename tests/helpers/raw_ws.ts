/**
 * A minimal WebSocket client over node:net, for tests that need what the SDK
 * cannot give: a chosen source address (`localAddress`, e.g. 127.0.0.2 to be
 * another client address on loopback) and many cheap one-shot connections.
 * It speaks just enough RFC 6455: the HTTP upgrade (checking the accept
 * key), masked binary frames out, unmasked frames in, pong for ping.
 */
import net from "node:net";
import { createHash, randomBytes } from "node:crypto";
import { Buffer } from "node:buffer";
import { ByteReader } from "../../core/bytes/mod.ts";
import { C2S, encodeClientMessage, readServerMessage, type ServerMessage } from "../../core/proto/mod.ts";

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** One frame from the server. */
export interface RawFrame {
  opcode: number;
  payload: Uint8Array;
}

/** An open WebSocket connection made over node:net. */
export class RawWebSocket {
  /** The local address and port the connection was made from. */
  readonly local: { address: string; port: number };
  readonly #socket: net.Socket;
  #buf: Buffer;
  #frames: RawFrame[] = [];
  #wake: (() => void) | null = null;
  #ended = false;

  private constructor(socket: net.Socket, rest: Buffer) {
    this.#socket = socket;
    this.#buf = rest;
    this.local = { address: socket.localAddress ?? "", port: socket.localPort ?? 0 };
    socket.on("data", (d: Buffer) => {
      this.#buf = this.#buf.length ? Buffer.concat([this.#buf, d]) : d;
      this.#parse();
    });
    const end = () => {
      this.#ended = true;
      this.#wakeUp();
    };
    socket.on("close", end);
    socket.on("error", end);
    this.#parse();
  }

  /** Connects to `url` (ws://HOST:PORT/PATH) from `localAddress` when given, and completes the upgrade. */
  static connect(url: string, opts: { localAddress?: string; timeoutMs?: number } = {}): Promise<RawWebSocket> {
    const u = new URL(url);
    const key = randomBytes(16).toString("base64");
    const accept = createHash("sha1").update(key + WS_GUID).digest("base64");
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: u.hostname, port: Number(u.port), localAddress: opts.localAddress });
      let head = Buffer.alloc(0);
      const timer = setTimeout(
        () => fail(new Error(`no upgrade from ${url} within ${opts.timeoutMs ?? 5000} ms`)),
        opts.timeoutMs ?? 5000,
      );
      const fail = (e: Error) => {
        clearTimeout(timer);
        socket.destroy();
        reject(e);
      };
      socket.on("error", fail);
      socket.on("connect", () => {
        socket.write(
          `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
      });
      const onData = (d: Buffer) => {
        head = Buffer.concat([head, d]);
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) {
          if (head.length > 16 * 1024) fail(new Error("upgrade response head over 16 KiB"));
          return;
        }
        socket.off("data", onData);
        socket.off("error", fail);
        clearTimeout(timer);
        const text = head.subarray(0, end).toString("latin1");
        const status = text.slice(0, text.indexOf("\r\n"));
        const got = /\r\nsec-websocket-accept:\s*(\S+)/i.exec(text)?.[1];
        if (!/^HTTP\/1\.1 101\b/.test(status) || got !== accept) {
          socket.destroy();
          reject(new Error(`no WebSocket upgrade from ${url}: ${status}${got === accept ? "" : " (bad accept key)"}`));
          return;
        }
        resolve(new RawWebSocket(socket, head.subarray(end + 4)));
      };
      socket.on("data", onData);
    });
  }

  /** Sends one masked frame (binary by default). */
  send(payload: Uint8Array, opcode = 2): void {
    const n = payload.length;
    const len = n < 126 ? 1 : n < 65536 ? 3 : 9;
    const frame = Buffer.alloc(1 + len + 4 + n);
    frame[0] = 0x80 | opcode;
    if (len === 1) frame[1] = 0x80 | n;
    else if (len === 3) {
      frame[1] = 0x80 | 126;
      frame.writeUInt16BE(n, 2);
    } else {
      frame[1] = 0x80 | 127;
      frame.writeBigUInt64BE(BigInt(n), 2);
    }
    const mask = randomBytes(4);
    const at = 1 + len;
    mask.copy(frame, at);
    for (let i = 0; i < n; i++) frame[at + 4 + i] = payload[i] ^ mask[i & 3];
    this.#socket.write(frame);
  }

  /** The next data or close frame, or null when the connection ended without one. */
  async next(): Promise<RawFrame | null> {
    while (this.#frames.length === 0) {
      if (this.#ended) return null;
      await new Promise<void>((r) => this.#wake = r);
    }
    return this.#frames.shift()!;
  }

  /** Drops the connection. */
  destroy(): void {
    this.#socket.destroy();
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  #parse(): void {
    for (;;) {
      const b = this.#buf;
      if (b.length < 2) return;
      let len = b[1] & 0x7f, at = 2;
      if (len === 126) {
        if (b.length < 4) return;
        len = b.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (b.length < 10) return;
        len = Number(b.readBigUInt64BE(2));
        at = 10;
      }
      if (b[1] & 0x80) {
        // A server must not mask; treat it as a broken connection.
        this.#socket.destroy();
        return;
      }
      if (b.length < at + len) return;
      const opcode = b[0] & 0x0f;
      const payload = new Uint8Array(b.subarray(at, at + len));
      this.#buf = b.subarray(at + len);
      if (opcode === 9) this.send(payload, 10);
      else if (opcode !== 10) {
        this.#frames.push({ opcode, payload });
        this.#wakeUp();
      }
    }
  }
}

/** What one raw login got: the first session reply (loginOk, loginFailed, …) or the close code. */
export interface RawLoginResult {
  reply: ServerMessage | null;
  /** The close frame's code when the server closed without a reply. */
  closeCode: number | null;
  /** The local address the connection came from. */
  from: string;
  /** Milliseconds from connecting to the reply. */
  ms: number;
}

/**
 * Opens a connection from `localAddress`, sends the client protocol's login message (as the SDK encodes it) in one
 * masked binary frame, waits for the reply and drops the connection.
 */
export async function rawLogin(
  url: string,
  creds: { name: string; password: string },
  opts: { localAddress?: string; timeoutMs?: number } = {},
): Promise<RawLoginResult> {
  const t0 = performance.now();
  const ws = await RawWebSocket.connect(url, opts);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    ws.send(encodeClientMessage({ id: C2S.login, ...creds, spaceId: null, position: null }));
    const reply = await Promise.race([
      (async (): Promise<RawLoginResult> => {
        for (;;) {
          const f = await ws.next();
          const base = { from: ws.local.address, ms: performance.now() - t0 };
          if (!f) return { reply: null, closeCode: null, ...base };
          if (f.opcode === 8) {
            const code = f.payload.length >= 2 ? (f.payload[0] << 8) | f.payload[1] : 1005;
            return { reply: null, closeCode: code, ...base };
          }
          if (f.opcode !== 2 || f.payload.length === 0) continue;
          const r = new ByteReader(f.payload);
          return { reply: readServerMessage(r, r.u8()), closeCode: null, ...base };
        }
      })(),
      new Promise<never>((_, rej) => {
        timer = setTimeout(
          () => rej(new Error(`no login reply within ${opts.timeoutMs ?? 5000} ms`)),
          opts.timeoutMs ?? 5000,
        );
      }),
    ]);
    return reply;
  } finally {
    clearTimeout(timer);
    ws.destroy();
  }
}
