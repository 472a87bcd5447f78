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

/**
 * Messages that may wait for one cell entity's cellapp (while it is dialled, or while the entity has none, as during a
 * rejoin window): far more than a client sends in that time within its rate limits. Past it, one-way messages are
 * dropped and requests refused, with one warning until the route opens again. A client's moves take one place: a move
 * that follows a waiting move replaces it, as the later position is the one that counts.
 */
export const MAX_ROUTE_WAITING = 1024;

/** A message waiting for the route to open; `move` marks a client's move (a clientPosition). */
interface Waiting {
  run(ch: Channel): void;
  fail(e: Error): void;
  move: boolean;
}

/** The route to one cell entity's cellapp. */
export class CellRoute {
  #address: string | null = null;
  #queue: Waiting[] = [];
  #dialing = false;
  /** Messages refused since the queue was last full. */
  #refused = 0;

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
    this.#send(def, args, false);
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
    else this.#send(CellMsg.clientPosition, [id, posePosition(pose), poseDirection(pose)], true);
  }

  /** `send`, where a `move` that would wait right after a waiting move takes its place. */
  #send<A extends unknown[]>(def: MessageDef<A, unknown>, args: A, move: boolean): void {
    const bad = def.check(args);
    if (bad) throw new Error(`not sending ${def.name}: ${bad}`);
    const ch = this.#open();
    if (ch && this.#queue.length === 0) return ch.send(def, ...args);
    const w: Waiting = { run: (c) => c.send(def, ...args), fail: () => {}, move };
    if (move && this.#queue.at(-1)?.move) this.#queue[this.#queue.length - 1] = w;
    else this.#wait(w, def.name);
  }

  /** Sends a request to the cellapp, in order with earlier messages (checked like `send`). */
  request<A extends unknown[], R>(def: MessageDef<A, R>, ...args: A): Promise<R> {
    const bad = def.check(args);
    if (bad) return Promise.reject(new Error(`not sending ${def.name}: ${bad}`));
    const ch = this.#open();
    if (ch && this.#queue.length === 0) return ch.request(def, ...args);
    if (this.#address === null) return Promise.reject(new Error(`${def.name}: the cell entity has no cellapp`));
    return new Promise<R>((resolve, reject) => {
      const run = (c: Channel) => c.request(def, ...args).then(resolve, reject);
      const queued = this.#wait({ run, fail: reject, move: false }, def.name);
      if (!queued) reject(new Error(`${def.name}: ${MAX_ROUTE_WAITING} messages already wait for the cellapp`));
    });
  }

  /** Queues `w` for the route's channel and dials it; false when the queue is full (`w` is refused). */
  #wait(w: Waiting, what: string): boolean {
    if (this.#queue.length >= MAX_ROUTE_WAITING) {
      if (this.#refused++ === 0) {
        this.log.warn(
          `${MAX_ROUTE_WAITING} messages wait for the cellapp at ${this.#address ?? "(none yet)"}: ${what} and ` +
            `what follows is dropped until it is reached`,
        );
      }
      return false;
    }
    this.#queue.push(w);
    this.#dial();
    return true;
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
        this.#refused = 0;
        for (const item of q) item.run(ch);
      },
      (e) => {
        this.#dialing = false;
        // Pointed elsewhere meanwhile: what waits is for the new cellapp.
        if (this.#address !== address) return this.#dial();
        this.log.warn(`cannot reach the cellapp at ${address}: ${errorText(e)}; ${this.#queue.length} dropped`);
        this.#drop(e as Error);
      },
    );
  }

  #drop(e: Error): void {
    const q = this.#queue;
    this.#queue = [];
    this.#refused = 0;
    for (const item of q) item.fail(e);
  }
}
