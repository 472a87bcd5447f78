import { type ArgsOf, MAX_KIND, type MessageDef, type ReplyOf } from "./catalog.ts";
import type { Channel } from "./channel.ts";

/** A handler of one message kind; its return value is the reply to a request. */
// deno-lint-ignore no-explicit-any
export type Handler = (ch: Channel, ...args: any[]) => unknown;

/** The table of message handlers an endpoint serves. */
export class Handlers {
  // Dense from the start: kinds are assigned out of order.
  #table: (Handler | undefined)[] = new Array(MAX_KIND + 1).fill(undefined);

  /** Serves `def` with `fn`; for a request, what `fn` returns (or resolves to) is the reply. */
  // deno-lint-ignore no-explicit-any
  on<D extends MessageDef<any, any>>(
    def: D,
    fn: (ch: Channel, ...args: ArgsOf<D>) => ReplyOf<D> | Promise<ReplyOf<D>>,
  ): this {
    this.#table[def.kind] = fn as Handler;
    return this;
  }

  /**
   * Replaces the handler of each of `defs` with what `wrap` makes of it (a gate, a step before it); `why` says what
   * the wrapping is for in the error when one of them is not served.
   */
  wrap(
    defs: readonly MessageDef<unknown[], unknown>[],
    why: string,
    wrap: (def: MessageDef<unknown[], unknown>, handler: Handler) => Handler,
  ): void {
    for (const def of defs) {
      const handler = this.get(def.kind);
      if (!handler) throw new Error(`${def.name} is not served here: ${why} needs it served first`);
      this.#table[def.kind] = wrap(def, handler);
    }
  }

  /** The handler of `kind`, if served. */
  get(kind: number): Handler | undefined {
    return kind >= 0 && kind <= MAX_KIND ? this.#table[kind] : undefined;
  }
}
