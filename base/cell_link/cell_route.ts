/**
 * The way from a base to its cell entity: the channel to the cellapp that
 * holds it, dialled on demand. Messages sent before the channel is open wait
 * in order, so enableWitness, positions and calls reach the cell as sent.
 */
import { errorText } from "../../core/errors.ts";
import { CellMsg, type Channel, checkMove, type MessageDef, writeMove } from "../../core/wire/mod.ts";
import { type Pose, poseDirection, posePosition } from "../../core/geo/mod.ts";
import type { Logger } from "../../core/log.ts";

/** Channels by peer address (core/wire Peers). */
export interface PeerSource {
  peek(address: string): Channel | undefined;
  get(address: string): Promise<Channel>;
}

/** The route to one cell entity's cellapp. */
export class CellRoute {
  #address: string | null = null;
  #queue: { run(ch: Channel): void; fail(e: Error): void }[] = [];
  #dialing = false;

  constructor(private readonly peers: PeerSource, private readonly log: Logger) {}

  /** The cellapp's address, or null while the cell entity has none. */
  get address(): string | null {
    return this.#address;
  }

  /** Points the route at a (new) cellapp; waiting messages go there. */
  setAddress(address: string | null): void {
    this.#address = address;
    if (address === null) this.#drop(new Error("the cell entity has no cellapp any more"));
    else if (this.#queue.length > 0) this.#dial();
  }

  /**
   * Sends a one-way message to the cellapp, in order with earlier ones. What
   * a client caused is checked first: a peer drops a process that sends it
   * nonsense, so nonsense must not leave.
   */
  send<A extends unknown[]>(def: MessageDef<A, unknown>, ...args: A): void {
    const bad = def.check(args);
    if (bad) throw new Error(`not sending ${def.name}: ${bad}`);
    const ch = this.#open();
    if (ch && this.#queue.length === 0) {
      ch.send(def, ...args);
      return;
    }
    this.#queue.push({ run: (c) => c.send(def, ...args), fail: () => {} });
    this.#dial();
  }

  /**
   * Sends a client's move, in order with earlier messages: a record of the channel's clientMoves batch when the
   * channel is open and nothing waits, else a clientPosition of its own. Checked like `send`.
   */
  sendMove(id: number, pose: Pose): void {
    const bad = checkMove(id, pose);
    if (bad) throw new Error(`not sending a move: ${bad}`);
    const w = this.#queue.length === 0 ? this.#open()?.record(CellMsg.clientMoves, 0) : null;
    if (w) writeMove(w, id, pose);
    else this.send(CellMsg.clientPosition, id, posePosition(pose), poseDirection(pose));
  }

  /** Sends a request to the cellapp, in order with earlier messages (checked like `send`). */
  request<A extends unknown[], R>(def: MessageDef<A, R>, ...args: A): Promise<R> {
    const bad = def.check(args);
    if (bad) return Promise.reject(new Error(`not sending ${def.name}: ${bad}`));
    const ch = this.#open();
    if (ch && this.#queue.length === 0) return ch.request(def, ...args);
    if (this.#address === null) return Promise.reject(new Error(`${def.name}: the cell entity has no cellapp`));
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ run: (c) => c.request(def, ...args).then(resolve, reject), fail: reject });
      this.#dial();
    });
  }

  #open(): Channel | undefined {
    return this.#address === null ? undefined : this.peers.peek(this.#address);
  }

  #dial(): void {
    const address = this.#address;
    if (this.#dialing || address === null) return;
    this.#dialing = true;
    this.peers.get(address).then(
      (ch) => {
        this.#dialing = false;
        if (this.#address !== address) return this.#dial();
        const q = this.#queue;
        this.#queue = [];
        for (const item of q) item.run(ch);
      },
      (e) => {
        this.#dialing = false;
        this.log.warn(`cannot reach the cellapp at ${address}: ${errorText(e)}; ${this.#queue.length} dropped`);
        this.#drop(e as Error);
      },
    );
  }

  #drop(e: Error): void {
    const q = this.#queue;
    this.#queue = [];
    for (const item of q) item.fail(e);
  }
}
