/**
 * A growable little-endian byte writer and a bounds-checked reader, used by the
 * compact type-driven client format and reusable by the client protocol.
 *
 * 64-bit integers are JavaScript numbers limited to the safe-integer range
 * (|v| <= 2^53 - 1); the reader rejects anything outside it.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });
const TWO32 = 4294967296;

/** Writes values into a growing buffer; `bytes()` returns what was written. */
export class ByteWriter {
  /** The buffer written into (replaced by a larger one as it fills). */
  buf: Uint8Array;
  /** A view of `buf`. */
  view: DataView;
  /** How many bytes are written. */
  pos = 0;

  /** A writer whose buffer starts at `initialSize` bytes. */
  constructor(initialSize = 256) {
    this.buf = new Uint8Array(initialSize);
    this.view = new DataView(this.buf.buffer);
  }

  /** Forgets what was written, keeping the buffer for reuse. */
  reset(): this {
    this.pos = 0;
    return this;
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** A view of the bytes written so far (valid until the next write or reset). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  /** A copy of the bytes written so far. */
  toBytes(): Uint8Array {
    return this.buf.slice(0, this.pos);
  }

  /** An unsigned 8-bit integer. */
  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }
  /** A signed 8-bit integer. */
  i8(v: number): void {
    this.ensure(1);
    this.view.setInt8(this.pos++, v);
  }
  /** An unsigned 16-bit integer. */
  u16(v: number): void {
    this.ensure(2);
    this.view.setUint16(this.pos, v, true);
    this.pos += 2;
  }
  /** A signed 16-bit integer. */
  i16(v: number): void {
    this.ensure(2);
    this.view.setInt16(this.pos, v, true);
    this.pos += 2;
  }
  /** An unsigned 32-bit integer. */
  u32(v: number): void {
    this.ensure(4);
    this.view.setUint32(this.pos, v, true);
    this.pos += 4;
  }
  /** A signed 32-bit integer. */
  i32(v: number): void {
    this.ensure(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }
  /** A safe integer as 8 bytes, two's complement. */
  i64(v: number): void {
    this.ensure(8);
    const lo = ((v % TWO32) + TWO32) % TWO32;
    const hi = (v - lo) / TWO32;
    this.view.setUint32(this.pos, lo, true);
    this.view.setInt32(this.pos + 4, hi, true);
    this.pos += 8;
  }
  /** A non-negative safe integer as 8 bytes. */
  u64(v: number): void {
    this.ensure(8);
    const lo = v % TWO32;
    this.view.setUint32(this.pos, lo, true);
    this.view.setUint32(this.pos + 4, (v - lo) / TWO32, true);
    this.pos += 8;
  }
  /** A 32-bit float. */
  f32(v: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, v, true);
    this.pos += 4;
  }
  /** A 64-bit float. */
  f64(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }
  /** An unsigned LEB128 integer (0 .. 2^53 - 1): 1 byte below 128. */
  varint(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }
  /** Raw bytes, no length. */
  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  /** Length-prefixed bytes. */
  blob(b: Uint8Array): void {
    this.varint(b.length);
    this.raw(b);
  }
  /** Length-prefixed UTF-8 text, encoded straight into the buffer. */
  string(s: string): void {
    if (s.length < 128) {
      // Worst case 3 bytes per UTF-16 unit, so the length fits one byte when short.
      this.ensure(1 + s.length * 3);
      const start = this.pos++;
      const { written } = encoder.encodeInto(s, this.buf.subarray(this.pos));
      if (written < 128) {
        this.buf[start] = written;
        this.pos += written;
        return;
      }
      this.pos = start;
    }
    const bytes = encoder.encode(s);
    this.blob(bytes);
  }
}

/** Reads what a ByteWriter wrote; every read checks the bounds. */
export class ByteReader {
  /** The bytes read from. */
  readonly buf: Uint8Array;
  /** A view of `buf`. */
  readonly view: DataView;
  /** Where the next read starts. */
  pos: number;
  /** Where reading stops. */
  readonly end: number;

  /** A reader of `buf` from `offset` up to `end`. */
  constructor(buf: Uint8Array, offset = 0, end = buf.length) {
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = offset;
    this.end = end;
  }

  /** Bytes left to read. */
  get remaining(): number {
    return this.end - this.pos;
  }

  /** Throws unless `n` more bytes are available. */
  need(n: number): void {
    if (this.pos + n > this.end) {
      throw new RangeError(
        `truncated data: need ${n} byte(s) at offset ${this.pos}, only ${this.end - this.pos} left`,
      );
    }
  }

  /** An unsigned 8-bit integer. */
  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }
  /** A signed 8-bit integer. */
  i8(): number {
    this.need(1);
    return this.view.getInt8(this.pos++);
  }
  /** An unsigned 16-bit integer. */
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  /** A signed 16-bit integer. */
  i16(): number {
    this.need(2);
    const v = this.view.getInt16(this.pos, true);
    this.pos += 2;
    return v;
  }
  /** An unsigned 32-bit integer. */
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A signed 32-bit integer. */
  i32(): number {
    this.need(4);
    const v = this.view.getInt32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A signed 64-bit integer; throws outside the safe-integer range. */
  i64(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getInt32(this.pos + 4, true);
    this.pos += 8;
    const v = hi * TWO32 + lo;
    if (!Number.isSafeInteger(v)) {
      throw new RangeError(
        `INT64 value at offset ${this.pos - 8} is outside the safe-integer range`,
      );
    }
    return v;
  }
  /** An unsigned 64-bit integer; throws outside the safe-integer range. */
  u64(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    const v = hi * TWO32 + lo;
    if (!Number.isSafeInteger(v)) {
      throw new RangeError(
        `UINT64 value at offset ${this.pos - 8} is outside the safe-integer range`,
      );
    }
    return v;
  }
  /** A 32-bit float. */
  f32(): number {
    this.need(4);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }
  /** A 64-bit float. */
  f64(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** An unsigned LEB128 integer; throws when longer than 8 bytes. */
  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
    throw new RangeError(`varint at offset ${this.pos} is too long`);
  }
  /** `n` raw bytes as a view into the source (no copy). */
  raw(n: number): Uint8Array {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }
  /** Length-prefixed bytes, copied. */
  blob(): Uint8Array {
    return this.raw(this.varint()).slice();
  }
  /** Length-prefixed UTF-8 text. */
  string(): string {
    const n = this.varint();
    return decoder.decode(this.raw(n));
  }
}
