/**
 * Messages a cellapp sends to itself: between two of its cells (a ghost, an
 * offload or a call between neighbour cells of one space on one cellapp).
 * They skip the network but keep a channel's guarantees: delivered in the
 * order sent (a ghost's creation before its later batches, each entity's
 * batches in order), never during the sender's own code (after it yields, as
 * a message from the network would be), and their arguments copied at once,
 * as encoding would, since senders may reuse their buffers.
 */
import type { MessageDef } from "../core/wire/mod.ts";
import { copyArgs } from "../core/bytes/mod.ts";

/** Runs a message here: the handler the cellapp serves it with; what it returns is the reply. */
export type LocalDispatch = (def: MessageDef<unknown[], unknown>, args: unknown[]) => unknown;

/** A FIFO of messages to this process, drained in a microtask. */
export class Loopback {
  #queue: (() => void)[] = [];
  #scheduled = false;

  constructor(private readonly dispatch: LocalDispatch, private readonly onError: (err: Error) => void) {}

  /** Queues a one-way message. */
  send<A extends unknown[]>(def: MessageDef<A, unknown>, args: A): void {
    const copy = copyArgs(args);
    this.#push(() => {
      try {
        const r = this.dispatch(def as MessageDef<unknown[], unknown>, copy);
        if (r instanceof Promise) r.catch((e) => this.onError(e as Error));
      } catch (e) {
        this.onError(e as Error);
      }
    });
  }

  /** Queues a request; resolves with the handler's reply, rejects with what it threw. */
  ask<A extends unknown[], R>(def: MessageDef<A, R>, args: A): Promise<R> {
    const copy = copyArgs(args);
    return new Promise<R>((resolve, reject) =>
      this.#push(() => {
        try {
          resolve(this.dispatch(def as MessageDef<unknown[], unknown>, copy) as R);
        } catch (e) {
          reject(e);
        }
      })
    );
  }

  #push(job: () => void): void {
    this.#queue.push(job);
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#drain());
  }

  #drain(): void {
    // Messages queued while draining (a handler sending on) are delivered in this pass, after those before them.
    for (let i = 0; i < this.#queue.length; i++) this.#queue[i]();
    this.#queue = [];
    this.#scheduled = false;
  }
}
