/**
 * A client's WebSocket: binds the socket's events to the client, batches the messages of a turn into one frame
 * and counts the frames and bytes that pass.
 */
import { ByteWriter } from "../core/bytes/mod.ts";
import { type ClientMessage, writeClientMessage } from "../core/proto/mod.ts";

/** Counters of what a client received and sent. */
export interface ClientStats {
  /** WebSocket frames received. */
  framesIn: number;
  /** WebSocket payload bytes received. */
  bytesIn: number;
  /** Messages received, of every kind (AOI messages included). */
  messagesIn: number;
  /** Of those, AOI messages (about the entities around the player), decoded or not. */
  aoiMessages: number;
  /** WebSocket frames sent (a turn's messages go out batched in one). */
  framesOut: number;
  /** WebSocket payload bytes sent. */
  bytesOut: number;
  /** Frames whose AOI part could not be read (not decoding, or a decode error). */
  undecoded: number;
}

/** Counters at zero, for a new client. */
export function newClientStats(): ClientStats {
  return { framesIn: 0, bytesIn: 0, messagesIn: 0, aoiMessages: 0, framesOut: 0, bytesOut: 0, undecoded: 0 };
}

/** Where the transport hands what comes from the connection in use. */
export interface TransportHandlers {
  /** A binary frame from the server. */
  frame(bytes: Uint8Array): void;
  /** The connection closed. */
  close(code: number, reason: string): void;
}

/** The connection in use (one after another when resuming) and the batch of bytes queued for it. */
export class Transport {
  #ws!: WebSocket;
  #out = new ByteWriter(256);
  #flushQueued = false;
  #handlers: TransportHandlers;

  constructor(readonly stats: ClientStats, handlers: TransportHandlers) {
    this.#handlers = handlers;
  }

  /** Makes `ws` the connection; `first` is sent as soon as it is open (a login or a resume). */
  use(ws: WebSocket, first: () => ClientMessage): void {
    ws.binaryType = "arraybuffer";
    this.#ws = ws;
    ws.onopen = () => {
      if (this.#ws === ws) this.message(first());
    };
    ws.onmessage = (ev) => {
      if (this.#ws === ws) this.#onFrame(ev.data);
    };
    ws.onerror = () => {};
    ws.onclose = (ev) => {
      if (this.#ws === ws) this.#handlers.close(ev.code, ev.reason);
    };
  }

  /** Queues one session message (batched with others of this turn). */
  message(m: ClientMessage): void {
    writeClientMessage(this.#out, m);
    this.#schedule();
  }

  /** Queues raw client-protocol bytes. */
  raw(bytes: Uint8Array): void {
    this.#out.raw(bytes);
    this.#schedule();
  }

  /** Sends raw bytes as a frame of their own right away (after what is queued). */
  frame(bytes: Uint8Array | string): void {
    this.flush();
    if (this.#ws.readyState !== WebSocket.OPEN) return;
    this.stats.framesOut++;
    this.stats.bytesOut += bytes.length;
    this.#ws.send(bytes);
  }

  /** Writes what is queued as one frame now. */
  flush(): void {
    this.#flushQueued = false;
    if (this.#out.pos === 0 || this.#ws.readyState !== WebSocket.OPEN) return;
    const bytes = this.#out.toBytes();
    this.#out.reset();
    this.stats.framesOut++;
    this.stats.bytesOut += bytes.length;
    this.#ws.send(bytes);
  }

  /** Drops what is queued, unsent (it was meant for a connection that is lost). */
  discard(): void {
    this.#out.reset();
    this.#flushQueued = false;
  }

  /** Closes the connection in use, if it is not closed already. */
  close(code: number, reason: string): void {
    try {
      this.#ws.close(code, reason);
    } catch {
      // already closed
    }
  }

  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => this.flush());
  }

  #onFrame(data: unknown): void {
    if (!(data instanceof ArrayBuffer)) return;
    this.stats.framesIn++;
    this.stats.bytesIn += data.byteLength;
    this.#handlers.frame(new Uint8Array(data));
  }
}
