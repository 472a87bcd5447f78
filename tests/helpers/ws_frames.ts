/**
 * A WebSocket client over raw TCP for tests of the server side: it writes frames of any shape (unmasked, reserved
 * bits, lying lengths, fragments) and reads the server's frames and HTTP answers byte for byte.
 */
const ascii = new TextEncoder();
const text = new TextDecoder();

/** Options of one client frame. */
export interface FrameOptions {
  fin?: boolean;
  /** Masked unless false; the mask is random. */
  mask?: boolean;
  /** RSV1-3 as bits 4-6 of the first byte (0x40, 0x20, 0x10). */
  rsv?: number;
  /** The length the header announces, when it should differ from the payload's. */
  announce?: number;
}

/** Encodes one client frame. */
export function clientFrame(op: number, payload: Uint8Array = new Uint8Array(0), o: FrameOptions = {}): Uint8Array {
  const len = o.announce ?? payload.length;
  const masked = o.mask ?? true;
  const ext = len < 126 ? 0 : len < 0x10000 ? 2 : 8;
  const out = new Uint8Array(2 + ext + (masked ? 4 : 0) + payload.length);
  out[0] = ((o.fin ?? true) ? 0x80 : 0) | (o.rsv ?? 0) | op;
  out[1] = (masked ? 0x80 : 0) | (ext === 0 ? len : ext === 2 ? 126 : 127);
  const dv = new DataView(out.buffer);
  if (ext === 2) dv.setUint16(2, len);
  if (ext === 8) dv.setBigUint64(2, BigInt(len));
  let at = 2 + ext;
  if (masked) {
    const mask = crypto.getRandomValues(new Uint8Array(4));
    out.set(mask, at);
    at += 4;
    for (let i = 0; i < payload.length; i++) out[at + i] = payload[i] ^ mask[i & 3];
  } else {
    out.set(payload, at);
  }
  return out;
}

/** A frame the server sent. */
export interface ServerFrame {
  fin: boolean;
  op: number;
  /** Set when the server (wrongly) masked it. */
  masked: boolean;
  payload: Uint8Array;
}

/** A handshake request for `port`; `extra` lines are added, `key` replaces the default key. */
export function upgradeRequest(port: number, o: { key?: string; extra?: string; version?: string } = {}): string {
  return `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    `Sec-WebSocket-Key: ${o.key ?? "dGhlIHNhbXBsZSBub25jZQ=="}\r\nSec-WebSocket-Version: ${o.version ?? "13"}\r\n` +
    `${o.extra ?? ""}\r\n`;
}

/** A TCP connection with a read buffer that can read HTTP heads and WebSocket frames. */
export class RawClient {
  #buf = new Uint8Array(0);
  #eof = false;
  #chunk = new Uint8Array(64 * 1024);
  /** A read that outlived a timeout; the next fill waits for it instead of starting another. */
  #reading: Promise<Uint8Array | null> | null = null;

  private constructor(readonly conn: Deno.TcpConn) {}

  /** Opens a TCP connection to 127.0.0.1:`port`. */
  static async open(port: number): Promise<RawClient> {
    return new RawClient(await Deno.connect({ hostname: "127.0.0.1", port }));
  }

  /** Opens a connection and completes a WebSocket handshake; throws unless the answer is 101. */
  static async upgrade(port: number): Promise<RawClient> {
    const c = await RawClient.open(port);
    await c.write(upgradeRequest(port));
    const head = await c.readHead(2000);
    if (!head.startsWith("HTTP/1.1 101")) throw new Error(`no upgrade: ${head}`);
    return c;
  }

  /** Writes bytes (or ASCII text) completely. */
  async write(data: Uint8Array | string): Promise<void> {
    const bytes = typeof data === "string" ? ascii.encode(data) : data;
    let off = 0;
    while (off < bytes.length) off += await this.conn.write(bytes.subarray(off));
  }

  /** Sends one client frame. */
  send(op: number, payload: Uint8Array | string = new Uint8Array(0), o: FrameOptions = {}): Promise<void> {
    return this.write(clientFrame(op, typeof payload === "string" ? ascii.encode(payload) : payload, o));
  }

  /** Reads an HTTP response head (through the blank line). */
  async readHead(timeoutMs = 2000): Promise<string> {
    for (;;) {
      const s = text.decode(this.#buf);
      const end = s.indexOf("\r\n\r\n");
      if (end >= 0) {
        this.#buf = this.#buf.subarray(ascii.encode(s.slice(0, end + 4)).length);
        return s.slice(0, end + 4);
      }
      if (!await this.#fill(timeoutMs)) throw new Error(`connection ended inside a response head: ${s}`);
    }
  }

  /** Reads everything until the server ends the connection, as text. */
  async readToEnd(timeoutMs = 2000): Promise<string> {
    while (await this.#fill(timeoutMs)) { /* keep reading */ }
    return text.decode(this.#buf);
  }

  /** Reads the next server frame, or null when the connection ended. */
  async readFrame(timeoutMs = 2000): Promise<ServerFrame | null> {
    for (;;) {
      const f = this.#parse();
      if (f) return f;
      if (!await this.#fill(timeoutMs)) return null;
    }
  }

  /** Reads frames until a close frame; returns its code and reason, or null when the connection ended first. */
  async readClose(timeoutMs = 2000): Promise<{ code: number; reason: string } | null> {
    for (;;) {
      const f = await this.readFrame(timeoutMs);
      if (!f) return null;
      if (f.op === 8) {
        const code = f.payload.length >= 2 ? (f.payload[0] << 8) | f.payload[1] : 1005;
        return { code, reason: text.decode(f.payload.subarray(2)) };
      }
    }
  }

  /** True once the server ended the connection (EOF or reset) within `timeoutMs`, discarding what it sent. */
  async ended(timeoutMs = 2000): Promise<boolean> {
    try {
      while (await this.#fill(timeoutMs)) this.#buf = new Uint8Array(0);
      return true;
    } catch (e) {
      if (e instanceof Deno.errors.TimedOut) return false;
      return true; // reset by the server
    }
  }

  /** Closes this side. */
  close(): void {
    try {
      this.conn.close();
    } catch {
      // already closed
    }
  }

  /** Reads more bytes; false at EOF. Throws Deno.errors.TimedOut after `timeoutMs` (the read stays pending). */
  async #fill(timeoutMs: number): Promise<boolean> {
    if (this.#eof) return false;
    if (!this.#reading) {
      const chunk = this.#chunk;
      this.#reading = this.conn.read(chunk).then((n) => n === null ? null : chunk.slice(0, n));
      this.#reading.catch(() => {}); // a read still pending when the test closes the connection fails quietly
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const got = await Promise.race([
      this.#reading,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Deno.errors.TimedOut(`nothing read within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    this.#reading = null;
    if (got === null) {
      this.#eof = true;
      return false;
    }
    const grown = new Uint8Array(this.#buf.length + got.length);
    grown.set(this.#buf);
    grown.set(got, this.#buf.length);
    this.#buf = grown;
    return true;
  }

  #parse(): ServerFrame | null {
    const b = this.#buf;
    if (b.length < 2) return null;
    let len = b[1] & 0x7f;
    let at = 2;
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    if (len === 126) {
      if (b.length < 4) return null;
      len = dv.getUint16(2);
      at = 4;
    } else if (len === 127) {
      if (b.length < 10) return null;
      len = Number(dv.getBigUint64(2));
      at = 10;
    }
    const masked = (b[1] & 0x80) !== 0;
    if (masked) at += 4;
    if (b.length < at + len) return null;
    const f = { fin: (b[0] & 0x80) !== 0, op: b[0] & 0x0f, masked, payload: b.slice(at, at + len) };
    this.#buf = b.subarray(at + len);
    return f;
  }
}
