/**
 * Bytes read from a socket and consumed from the front by a protocol reader.
 * A consumed byte is never written again, so what a reader hands out may be a
 * view into the buffer that stays valid; a full buffer is replaced by a fresh
 * one holding the unread tail.
 */
export class ReadBuffer {
  protected buf: Uint8Array;
  /** First unconsumed byte. */
  protected start = 0;
  /** One past the last byte read. */
  protected end = 0;

  constructor(
    /** Size of a fresh buffer, at least. */
    private minSize: number,
    /** Free space `space()` asks for unless told. */
    private readMin: number,
    /** The sizes `adapt` grows them to (none: they stay). */
    private readonly grownSize: number = minSize,
    private readonly grownRead: number = readMin,
  ) {
    this.buf = new Uint8Array(minSize);
  }

  /** Bytes read but not yet consumed. */
  get buffered(): number {
    return this.end - this.start;
  }

  /** Space to read the next chunk into; call `commit(n)` after reading n bytes. */
  space(min: number = this.readMin): Uint8Array {
    if (this.buf.length - this.end < min) {
      const used = this.end - this.start;
      const grown = new Uint8Array(Math.max(this.minSize, used + min));
      grown.set(this.buf.subarray(this.start, this.end));
      this.buf = grown;
      this.start = 0;
      this.end = used;
    }
    return this.buf.subarray(this.end);
  }

  /** Bytes the buffer has room for: what the connection it reads costs meanwhile. */
  get capacity(): number {
    return this.buf.length;
  }

  /**
   * Makes room toward a frame of `size` bytes starting at the first unconsumed byte: for the rest of it, but never
   * more than as much again as has arrived, or a read's worth. A peer that declares a large frame and sends little of
   * it costs little; one that sends it grows the buffer by doubling. (Room for the whole frame at once let every
   * hostile connection hold a buffer of the largest frame allowed, and the allocator kept that memory after it was
   * freed: docs/protocol.md, "Framing".)
   */
  protected reserve(size: number): void {
    if (this.buf.length - this.start >= size) return;
    const avail = this.end - this.start;
    this.space(Math.min(size - avail, Math.max(avail, this.readMin)));
  }

  /** Records that `n` bytes were read into the last `space()`. */
  commit(n: number): void {
    this.end += n;
  }

  /**
   * Doubles the sizes, up to the grown ones, when a read filled all the space it was given (`read` bytes of
   * `offered`): a peer that sends little keeps a small buffer, a busy one reaches the working size in a few reads.
   */
  adapt(read: number, offered: number): void {
    if (read < offered || this.minSize >= this.grownSize) return;
    this.minSize = Math.min(this.grownSize, this.minSize * 2);
    this.readMin = Math.min(this.grownRead, this.readMin * 2);
  }

  /** Appends bytes the caller already holds. */
  push(chunk: Uint8Array): void {
    this.space(chunk.length).set(chunk);
    this.commit(chunk.length);
  }
}
