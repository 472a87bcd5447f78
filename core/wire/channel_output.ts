/**
 * The outgoing side of a channel (docs/architecture.md, "The wire"): frames waiting to be written, the records message
 * being filled, when the buffer is flushed (at the end of the running tick, else of this turn, or at once past the
 * flush threshold) and the loop that writes it to the connection.
 */
import { errorText } from "../errors.ts";
import { ByteWriter } from "../bytes/mod.ts";
import { moveTrace } from "../trace.ts";
import type { ByteConn } from "../tls/mod.ts";
import { FrameWriter } from "./frame.ts";
import type { MessageDef } from "./catalog.ts";
import { deferFlush, type Flushable, inTick } from "./outbox.ts";

/**
 * A message whose arguments are `[head, records]`: records appended one by one with `Channel.record` travel as one
 * message, so a stream of small messages (client moves, client frames) costs one encode and one decode per batch.
 */
export type RecordsDef = MessageDef<[number, Uint8Array], unknown>;

/** Counters of one channel's traffic. */
export interface ChannelStats {
  framesIn: number;
  framesOut: number;
  bytesIn: number;
  bytesOut: number;
  writes: number;
}

/** What the output needs of its channel. */
export interface OutputHost {
  /** The channel's counters: the output keeps framesOut, bytesOut and writes. */
  readonly stats: ChannelStats;
  /** Whether the channel is open (records are taken only then). */
  readonly isOpen: boolean;
  /** Closes the channel: its peer reads too slowly, or a write failed. */
  close(reason: string, tellPeer: boolean): void;
}

/** The outgoing side of one channel. */
export class ChannelOutput implements Flushable {
  #conn: ByteConn;
  #host: OutputHost;
  #flushThreshold: number;
  #maxFrame: number;
  #writer: FrameWriter;
  #writing = false;
  #writeDone: Promise<void> = Promise.resolve();
  #flushPending = false;
  #flushTask = () => this.flush();
  /** The records message being filled (see `record`), its head, and its bytes. */
  #batchDef: RecordsDef | null = null;
  #batchHead = 0;
  #batch: ByteWriter | null = null;

  /** `firstBytes`: the writer's first buffer (it doubles as more is written). */
  constructor(
    conn: ByteConn,
    host: OutputHost,
    o: { flushThreshold: number; maxFrame: number },
    firstBytes: number,
  ) {
    this.#conn = conn;
    this.#host = host;
    this.#flushThreshold = o.flushThreshold;
    this.#maxFrame = o.maxFrame;
    this.#writer = new FrameWriter(firstBytes, o.maxFrame);
  }

  /** Bytes waiting to be written, the records being filled included. */
  get buffered(): number {
    return this.#writer.length + (this.#batchDef === null ? 0 : this.#batch!.pos);
  }

  /** Resolves when the write under way (if any) has ended. */
  get writeDone(): Promise<void> {
    return this.#writeDone;
  }

  /** Queues message `msg` (after the records being filled), counted, written at the next flush. */
  push(msg: unknown[]): void {
    if (this.#batchDef !== null) this.#closeBatch();
    this.#pushed(this.#writer.push(msg));
  }

  /** Queues a message encoded earlier, as `push` does. */
  pushBody(body: Uint8Array): void {
    if (this.#batchDef !== null) this.#closeBatch();
    this.#pushed(this.#writer.pushBody(body));
  }

  /** Queues a last message as the channel closes: not counted, and no flush is scheduled. */
  pushLast(msg: unknown[]): void {
    if (this.#batchDef !== null) this.#closeBatch();
    this.#writer.push(msg);
  }

  /**
   * Starts one record of the records message `def` with `head` and returns the writer to append it to, at once (the
   * writer is the channel's: write the record before anything else is sent). Records appended in one turn (one tick)
   * with the same def and head go out as one message, in order with the channel's other messages: any other message
   * closes the batch first. Returns null when the channel is not open.
   */
  record(def: RecordsDef, head: number): ByteWriter | null {
    if (!this.#host.isOpen) return null;
    const w = this.#batch ??= new ByteWriter(4096);
    if (this.#batchDef !== null && (this.#batchDef !== def || this.#batchHead !== head)) this.#closeBatch();
    else if (w.pos >= this.#flushThreshold) {
      this.#closeBatch();
      this.#afterWrite();
      if (!this.#host.isOpen) return null;
    }
    if (this.#batchDef === null) {
      this.#batchDef = def;
      this.#batchHead = head;
      this.#scheduleFlush();
    }
    return w;
  }

  /** Writes everything buffered now, without waiting for the end of the tick. */
  flush(): void {
    if (this.#batchDef !== null) this.#closeBatch();
    this.#flushPending = false;
    if (!this.#writing && this.#writer.length > 0) {
      this.#writeDone = this.#writeLoop();
    }
  }

  /** Encodes the records appended so far as one message. */
  #closeBatch(): void {
    const def = this.#batchDef!, w = this.#batch!;
    this.#batchDef = null;
    if (w.pos === 0) return;
    const size = this.#writer.push([def.kind, 0, this.#batchHead, w.bytes()]);
    if (moveTrace.on && def.name === "toClients") moveTrace.mark("batched");
    w.reset();
    this.#host.stats.framesOut++;
    this.#host.stats.bytesOut += size;
  }

  /** Counts a frame of `size` bytes just added to the writer. */
  #pushed(size: number): void {
    this.#host.stats.framesOut++;
    this.#host.stats.bytesOut += size;
    this.#afterWrite();
  }

  /** Writes at once past the flush threshold (closing the channel to a peer that reads too slowly), else later. */
  #afterWrite(): void {
    if (this.#writer.length >= this.#flushThreshold) {
      this.flush();
      if (this.#writer.length > Math.max(64 * 1024 * 1024, 2 * this.#maxFrame)) {
        this.#host.close(`peer too slow: ${this.#writer.length} bytes waiting to be written`, false);
      }
      return;
    }
    this.#scheduleFlush();
  }

  /** Flushes at the end of the running tick, or else of this turn. */
  #scheduleFlush(): void {
    if (this.#flushPending) return;
    this.#flushPending = true;
    if (inTick()) deferFlush(this);
    else queueMicrotask(this.#flushTask);
  }

  async #writeLoop(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#writer.length > 0) {
        const bytes = this.#writer.take();
        let off = 0;
        while (off < bytes.length) {
          off += await this.#conn.write(bytes.subarray(off));
        }
        this.#host.stats.writes++;
        this.#writer.recycle(bytes);
      }
    } catch (e) {
      this.#host.close(`write failed: ${errorText(e)}`, false);
    } finally {
      this.#writing = false;
    }
  }
}
