/**
 * RFC 6455 framing, server side: a reader that turns masked client frames into whole messages and control frames,
 * checking every header before any of its payload is buffered, and a writer that appends unmasked server frames to
 * one growable buffer so that many frames become one socket write.
 */
import { ReadBuffer } from "../read_buffer.ts";

/** Frame opcodes (RFC 6455 section 5.2). */
export const Op = {
  continuation: 0,
  text: 1,
  binary: 2,
  close: 8,
  ping: 9,
  pong: 10,
} as const;

/** Returned by WsReader.next() when no complete message or control frame is buffered yet. */
export const NEED_MORE = -1;

/** Close codes this server sends (RFC 6455 section 7.4.1). */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  /** Sent by nobody: reported when a close frame carried no code. */
  noStatus: 1005,
  /** Sent by nobody: reported when the connection ended without a close frame. */
  abnormal: 1006,
  invalidData: 1007,
  policy: 1008,
  tooBig: 1009,
  serverError: 1011,
} as const;

/** The peer broke the protocol; `code` is the close code to answer with. */
export class WsProtocolError extends Error {
  override name = "WsProtocolError";
  constructor(readonly code: number, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}

const EMPTY = new Uint8Array(0);
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const utf8 = new TextEncoder();
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** True for a close code an endpoint may put in a close frame. */
export function isSendableCode(code: number): boolean {
  return (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) || (code >= 3000 && code <= 4999);
}

/**
 * XORs `len` bytes of `b` from `from` with the 4-byte mask at `maskAt`, in place. Long payloads go 32 bits at a time
 * once aligned; short ones byte by byte, unrolled.
 */
export function unmask(b: Uint8Array, from: number, len: number, maskAt: number): void {
  const m0 = b[maskAt], m1 = b[maskAt + 1], m2 = b[maskAt + 2], m3 = b[maskAt + 3];
  if ((m0 | m1 | m2 | m3) === 0) return;
  let i = from;
  const end = from + len;
  if (LITTLE_ENDIAN && len >= 64) {
    // Align to 4 bytes, then XOR words with the mask rotated to the alignment.
    const lead = (4 - ((b.byteOffset + i) & 3)) & 3;
    const m = [m0, m1, m2, m3];
    for (let k = 0; k < lead; k++) b[i++] ^= m[k];
    const r = lead;
    const word = (m[r & 3] | (m[(r + 1) & 3] << 8) | (m[(r + 2) & 3] << 16) | (m[(r + 3) & 3] << 24)) >>> 0;
    const n = (end - i) >>> 2;
    const words = new Uint32Array(b.buffer, b.byteOffset + i, n);
    for (let k = 0; k < n; k++) words[k] ^= word;
    i += n * 4;
    for (let k = r; i < end; k++) b[i++] ^= m[k & 3];
    return;
  }
  for (; i + 4 <= end; i += 4) {
    b[i] ^= m0;
    b[i + 1] ^= m1;
    b[i + 2] ^= m2;
    b[i + 3] ^= m3;
  }
  if (i < end) b[i++] ^= m0;
  if (i < end) b[i++] ^= m1;
  if (i < end) b[i] ^= m2;
}

/** Reads a close frame's payload; a malformed one (bad length, code or UTF-8) is a protocol error. */
export function parseClose(payload: Uint8Array): { code: number; reason: string } {
  if (payload.length === 0) return { code: CloseCode.noStatus, reason: "" };
  if (payload.length === 1) throw new WsProtocolError(CloseCode.protocolError, "close frame with a 1-byte payload");
  const code = (payload[0] << 8) | payload[1];
  if (!isSendableCode(code)) {
    throw new WsProtocolError(CloseCode.protocolError, `close frame with the invalid code ${code}`);
  }
  let reason: string;
  try {
    reason = strictUtf8.decode(payload.subarray(2));
  } catch (e) {
    throw new WsProtocolError(CloseCode.invalidData, "close reason is not valid UTF-8", { cause: e });
  }
  return { code, reason };
}

/** A close frame's payload: the code, then the reason cut to 123 bytes on a character boundary. */
export function closePayload(code: number, reason: string): Uint8Array {
  let text = utf8.encode(reason);
  if (text.length > 123) {
    let cut = 123;
    while (cut > 0 && (text[cut] & 0xc0) === 0x80) cut--;
    text = text.subarray(0, cut);
  }
  const out = new Uint8Array(2 + text.length);
  out[0] = code >> 8;
  out[1] = code & 0xff;
  out.set(text, 2);
  return out;
}

/**
 * Turns a stream of bytes from a client into messages and control frames. One growable buffer holds what was read;
 * consumed bytes are never written again, so a delivered message may be a view into the buffer that stays valid.
 */
export class WsReader extends ReadBuffer {
  /** Largest message accepted, in bytes; checked against each frame's header before its payload is buffered. */
  maxMessage: number;
  /** The payload of what `next()` returned last: a whole message, or a control frame's payload. */
  payload: Uint8Array = EMPTY;
  /** Opcode of the fragmented message being assembled, 0 when none. */
  #fragOp = 0;
  #frag: Uint8Array = EMPTY;
  #fragLen = 0;

  constructor(maxMessage: number, initialSize = 4 * 1024) {
    super(initialSize, 1024);
    this.maxMessage = maxMessage;
  }

  /**
   * Consumes the next complete message (Op.text or Op.binary, fragments joined) or control frame (Op.close, Op.ping,
   * Op.pong) and returns its opcode, with its bytes in `payload`; returns NEED_MORE when more bytes are needed.
   * Throws WsProtocolError when the client broke the protocol or a message would exceed `maxMessage`.
   */
  next(): number {
    for (;;) {
      const avail = this.end - this.start;
      if (avail < 2) return NEED_MORE;
      const b = this.buf;
      const s = this.start;
      const b0 = b[s], b1 = b[s + 1];
      const fin = (b0 & 0x80) !== 0;
      const op = b0 & 0x0f;
      if ((b0 & 0x70) !== 0) {
        throw new WsProtocolError(CloseCode.protocolError, "RSV bits set, but no extension was negotiated");
      }
      if (op >= 8) {
        if (op > Op.pong) throw new WsProtocolError(CloseCode.protocolError, `unknown opcode ${op}`);
        if (!fin) throw new WsProtocolError(CloseCode.protocolError, "fragmented control frame");
        if ((b1 & 0x7f) > 125) {
          throw new WsProtocolError(CloseCode.protocolError, "control frame with more than 125 bytes of payload");
        }
      } else if (op > Op.binary) {
        throw new WsProtocolError(CloseCode.protocolError, `unknown opcode ${op}`);
      } else if (op === Op.continuation && this.#fragOp === 0) {
        throw new WsProtocolError(CloseCode.protocolError, "continuation frame with no message to continue");
      } else if (op !== Op.continuation && this.#fragOp !== 0) {
        throw new WsProtocolError(CloseCode.protocolError, "new message before the fragmented one ended");
      }
      if ((b1 & 0x80) === 0) throw new WsProtocolError(CloseCode.protocolError, "client frames must be masked");
      let len = b1 & 0x7f;
      let head = 6;
      if (len === 126) {
        if (avail < 4) return NEED_MORE;
        len = (b[s + 2] << 8) | b[s + 3];
        head = 8;
      } else if (len === 127) {
        if (avail < 10) return NEED_MORE;
        const hi = ((b[s + 2] << 24) | (b[s + 3] << 16) | (b[s + 4] << 8) | b[s + 5]) >>> 0;
        const lo = ((b[s + 6] << 24) | (b[s + 7] << 16) | (b[s + 8] << 8) | b[s + 9]) >>> 0;
        // RFC 6455 section 5.2: the most significant bit of a 64-bit length must be 0.
        if (hi >= 0x80000000) {
          throw new WsProtocolError(CloseCode.protocolError, "64-bit payload length with its most significant bit set");
        }
        if (hi >= 0x200000) {
          throw new WsProtocolError(
            CloseCode.tooBig,
            `message of at least 2^53 bytes exceeds the limit of ${this.maxMessage}`,
          );
        }
        len = hi * 0x100000000 + lo;
        head = 14;
      }
      if (op < 8 && this.#fragLen + len > this.maxMessage) {
        throw new WsProtocolError(
          CloseCode.tooBig,
          `message of ${this.#fragLen + len} bytes exceeds the limit of ${this.maxMessage}`,
        );
      }
      const size = head + len;
      if (avail < size) {
        this.reserve(size);
        return NEED_MORE;
      }
      const from = s + head;
      unmask(b, from, len, from - 4);
      this.start = s + size;
      if (op >= 8) {
        this.payload = b.subarray(from, from + len);
        return op;
      }
      if (fin && op !== Op.continuation) {
        this.payload = b.subarray(from, from + len);
        if (op === Op.text) checkUtf8(this.payload);
        return op;
      }
      this.#append(b, from, len);
      if (op !== Op.continuation) {
        this.#fragOp = op;
        continue;
      }
      if (!fin) continue;
      const whole = this.#frag.subarray(0, this.#fragLen);
      const wholeOp = this.#fragOp;
      this.#frag = EMPTY;
      this.#fragLen = 0;
      this.#fragOp = 0;
      this.payload = whole;
      if (wholeOp === Op.text) checkUtf8(whole);
      return wholeOp;
    }
  }

  /** Copies a fragment into the message being assembled (a delivered message keeps its buffer; the next gets a new one). */
  #append(b: Uint8Array, from: number, len: number): void {
    const need = this.#fragLen + len;
    if (need > this.#frag.length) {
      const grown = new Uint8Array(Math.min(Math.max(need, this.#frag.length * 2, 1024), this.maxMessage));
      grown.set(this.#frag.subarray(0, this.#fragLen));
      this.#frag = grown;
    }
    this.#frag.set(b.subarray(from, from + len), this.#fragLen);
    this.#fragLen = need;
  }
}

function checkUtf8(bytes: Uint8Array): void {
  try {
    strictUtf8.decode(bytes);
  } catch (e) {
    throw new WsProtocolError(CloseCode.invalidData, "text message is not valid UTF-8", { cause: e });
  }
}

/**
 * Appends unmasked server frames to a growable buffer. `take` hands the bytes to the write loop and continues in a
 * spare buffer; `recycle` gives them back once written, so steady traffic allocates nothing.
 */
export class WsWriter {
  #buf: Uint8Array;
  #len = 0;
  #spare: Uint8Array | null = null;
  readonly #initialSize: number;

  constructor(initialSize = 1024) {
    this.#initialSize = initialSize;
    this.#buf = new Uint8Array(initialSize);
  }

  /** Bytes waiting to be written. */
  get length(): number {
    return this.#len;
  }

  /** Appends one final frame with `payload`. */
  frame(op: number, payload: Uint8Array): void {
    this.#header(op, payload.length);
    this.#buf.set(payload, this.#len);
    this.#len += payload.length;
  }

  /** Appends one final frame whose payload is `parts` one after the other. */
  frameParts(op: number, parts: readonly Uint8Array[]): void {
    let total = 0;
    for (const p of parts) total += p.length;
    this.#header(op, total);
    for (const p of parts) {
      this.#buf.set(p, this.#len);
      this.#len += p.length;
    }
  }

  /** Hands over the buffered bytes; give them back with `recycle` once written. */
  take(): Uint8Array {
    const out = this.#buf.subarray(0, this.#len);
    this.#buf = this.#spare ?? new Uint8Array(this.#initialSize);
    this.#spare = null;
    this.#len = 0;
    return out;
  }

  /** Returns a buffer obtained from `take` after it was written; large ones are dropped so idle connections stay small. */
  recycle(bytes: Uint8Array): void {
    if (this.#spare === null && bytes.buffer.byteLength <= 64 * 1024) {
      this.#spare = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.buffer.byteLength - bytes.byteOffset);
    }
  }

  #header(op: number, len: number): void {
    this.#reserve(10 + len);
    const b = this.#buf;
    let i = this.#len;
    b[i++] = 0x80 | op;
    if (len < 126) {
      b[i++] = len;
    } else if (len < 0x10000) {
      b[i++] = 126;
      b[i++] = len >> 8;
      b[i++] = len & 0xff;
    } else {
      b[i++] = 127;
      const hi = Math.floor(len / 0x100000000);
      b[i++] = hi >>> 24;
      b[i++] = (hi >>> 16) & 0xff;
      b[i++] = (hi >>> 8) & 0xff;
      b[i++] = hi & 0xff;
      b[i++] = len >>> 24;
      b[i++] = (len >>> 16) & 0xff;
      b[i++] = (len >>> 8) & 0xff;
      b[i++] = len & 0xff;
    }
    this.#len = i;
  }

  #reserve(extra: number): void {
    const need = this.#len + extra;
    if (need <= this.#buf.length) return;
    let size = Math.max(this.#buf.length * 2, this.#initialSize);
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#len));
    this.#buf = grown;
  }
}
