import { errorText } from "../errors.ts";
import { Decoder, Encoder, ExtensionCodec } from "@msgpack/msgpack";
import { DEFAULT_MSGPACK_LIMITS, type MsgpackLimits, scanMsgpack } from "../bytes/mod.ts";
import { ReadBuffer } from "../read_buffer.ts";

export { DEFAULT_MSGPACK_LIMITS, type MsgpackLimits, scanMsgpack } from "../bytes/mod.ts";

/**
 * msgpack with bigint kept apart from number: plain integers decode as
 * numbers (msgpack's int64 would otherwise make every large one a bigint),
 * and bigint values travel as extension 1 (int64) or 2 (uint64).
 */
export const wireCodec: ExtensionCodec = new ExtensionCodec();
wireCodec.register({
  type: 1,
  encode: (v: unknown) => {
    if (typeof v !== "bigint" || v < -(2n ** 63n) || v >= 2n ** 63n) {
      return null;
    }
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigInt64(0, v);
    return b;
  },
  decode: (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength).getBigInt64(0),
});
wireCodec.register({
  type: 2,
  encode: (v: unknown) => {
    if (typeof v !== "bigint" || v < 0n || v >= 2n ** 64n) return null;
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, v);
    return b;
  },
  decode: (d: Uint8Array) => new DataView(d.buffer, d.byteOffset, d.byteLength).getBigUint64(0),
});

const messageEncoder = new Encoder({ extensionCodec: wireCodec });

/**
 * The frame body of one-way message `kind` with `args`, encoded now: a copy as small as it will be on the wire, of
 * the arguments only (a byte array that is a view keeps none of the rest of its buffer), for `Channel.sendEncoded`.
 */
export function encodeMessage(kind: number, args: readonly unknown[]): Uint8Array {
  return messageEncoder.encode([kind, 0, ...args]);
}

/** The largest buffer a FrameWriter keeps as its spare for the next write (larger ones go after one write). */
const SPARE_LIMIT = 4 * 1024 * 1024;

/** Default upper bound of one frame's body, in bytes (16 MiB). */
export const DEFAULT_MAX_FRAME = 16 * 1024 * 1024;

/** Bytes of the big-endian length that precedes every frame. */
export const FRAME_HEADER = 4;

/** Raised when the byte stream from a peer cannot be read as frames. */
export class FrameError extends Error {
  override name = "FrameError";
}

/**
 * Appends length-prefixed msgpack frames to a growable buffer, so that many
 * messages become one socket write.
 */
export class FrameWriter {
  #encoder = new Encoder({ extensionCodec: wireCodec });
  #buf: Uint8Array;
  #view: DataView;
  #len = 0;
  #frames = 0;
  #spare: Uint8Array | null = null;

  constructor(
    initialSize = 64 * 1024,
    readonly maxFrame: number = DEFAULT_MAX_FRAME,
  ) {
    this.#buf = new Uint8Array(initialSize);
    this.#view = new DataView(this.#buf.buffer);
  }

  /** Bytes waiting to be written. */
  get length(): number {
    return this.#len;
  }

  /** Frames waiting to be written. */
  get frames(): number {
    return this.#frames;
  }

  /** Encodes `value` as one frame at the end of the buffer; returns the frame's size. */
  push(value: unknown): number {
    return this.pushBody(this.#encoder.encodeSharedRef(value));
  }

  /** Appends a frame whose body is already encoded (`encodeMessage`); returns the frame's size. */
  pushBody(body: Uint8Array): number {
    if (body.length > this.maxFrame) {
      throw new FrameError(
        `frame of ${body.length} bytes exceeds the limit of ${this.maxFrame}`,
      );
    }
    const size = FRAME_HEADER + body.length;
    this.#reserve(size);
    this.#view.setUint32(this.#len, body.length);
    this.#buf.set(body, this.#len + FRAME_HEADER);
    this.#len += size;
    this.#frames++;
    return size;
  }

  /**
   * Hands over the buffered bytes and continues in a spare buffer. Give the
   * bytes back with `recycle` once written, so steady traffic allocates nothing.
   */
  take(): Uint8Array {
    const out = this.#buf.subarray(0, this.#len);
    const spare = this.#spare;
    this.#spare = null;
    // Continues in a buffer small enough to be recycled: a writer grown past that by one burst would otherwise
    // allocate a buffer of its largest size for every write after it.
    this.#buf = spare ?? new Uint8Array(Math.min(this.#buf.length, SPARE_LIMIT));
    this.#view = new DataView(this.#buf.buffer);
    this.#len = 0;
    this.#frames = 0;
    return out;
  }

  /** Returns a buffer obtained from `take` after it has been written. */
  recycle(bytes: Uint8Array): void {
    const whole = new Uint8Array(bytes.buffer);
    if (this.#spare === null && whole.length <= SPARE_LIMIT) {
      this.#spare = whole;
    }
  }

  #reserve(extra: number): void {
    const need = this.#len + extra;
    if (need <= this.#buf.length) return;
    let size = this.#buf.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.#buf.subarray(0, this.#len));
    this.#buf = grown;
    this.#view = new DataView(grown.buffer);
  }
}

/** A FrameReader's buffer size, at least, and the free space it reads into. */
export interface ReaderSizes {
  buffer: number;
  read: number;
}

/** The working sizes of a reader: a tick's traffic from a busy peer in a few reads. */
export const READER_SIZES: ReaderSizes = { buffer: 64 * 1024, read: 16 * 1024 };

/**
 * Turns a stream of byte chunks back into decoded frames. A length over the
 * limit, a body that is not msgpack, or one beyond the msgpack limits (too
 * deep, too long, too costly to decode for its size: scanMsgpack) raises
 * FrameError: the caller closes the channel, since the stream cannot be
 * resynchronised.
 */
export class FrameReader extends ReadBuffer {
  #decoder = new Decoder({ extensionCodec: wireCodec });
  #maxFrame = DEFAULT_MAX_FRAME;

  constructor(
    maxFrame: number = DEFAULT_MAX_FRAME,
    readonly limits: MsgpackLimits = DEFAULT_MSGPACK_LIMITS,
    /** The sizes it starts at; `adapt` grows them to READER_SIZES. */
    sizes: ReaderSizes = READER_SIZES,
  ) {
    // Decoded BLOBs are views into the buffer: it keeps what was consumed (ReadBuffer).
    super(
      sizes.buffer,
      sizes.read,
      Math.max(sizes.buffer, READER_SIZES.buffer),
      Math.max(sizes.read, READER_SIZES.read),
    );
    this.maxFrame = maxFrame;
  }

  /**
   * Largest frame body accepted, in bytes. It may be changed at any time (a
   * channel keeps it small until its handshake is done): the next call of
   * `next()` checks against it, a frame already partly buffered included.
   */
  get maxFrame(): number {
    return this.#maxFrame;
  }

  set maxFrame(bytes: number) {
    if (!Number.isInteger(bytes) || bytes < 1 || bytes > 0xffffffff) {
      throw new RangeError(`maxFrame must be an integer from 1 to ${0xffffffff}, got ${bytes}`);
    }
    this.#maxFrame = bytes;
  }

  /** Decodes the next complete frame, or returns NONE when more bytes are needed. */
  next(): unknown {
    const avail = this.end - this.start;
    if (avail < FRAME_HEADER) return NONE;
    const b = this.buf;
    const s = this.start;
    const len = ((b[s] << 24) | (b[s + 1] << 16) | (b[s + 2] << 8) | b[s + 3]) >>> 0;
    if (len > this.maxFrame) {
      throw new FrameError(
        `frame of ${len} bytes exceeds the limit of ${this.maxFrame}`,
      );
    }
    if (avail < FRAME_HEADER + len) {
      this.reserve(FRAME_HEADER + len);
      return NONE;
    }
    const from = this.start + FRAME_HEADER;
    this.start = from + len;
    const body = b.subarray(from, from + len);
    const refused = scanMsgpack(body, this.limits);
    if (refused !== null) throw new FrameError(`frame body refused: ${refused}`);
    try {
      return this.#decoder.decode(body);
    } catch (e) {
      throw new FrameError(
        `frame body is not valid msgpack: ${errorText(e)}`,
        { cause: e },
      );
    }
  }
}

/** Returned by FrameReader.next() when no complete frame is buffered yet. */
export const NONE: unique symbol = Symbol("no frame");
