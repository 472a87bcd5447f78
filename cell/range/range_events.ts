/**
 * A range list's pending events: enters and leaves found while nodes move, delivered once the lists are consistent
 * again (the end of each public mutating call), so that handlers may move, add and remove entities and triggers.
 */
import type { RangeEntity, RangeTrigger, TriggerList } from "./range_node.ts";

/** The queue of a range list's undelivered events, as parallel arrays used as a FIFO: queueing allocates nothing. */
export class RangeEvents {
  readonly #trigger: (RangeTrigger | null)[] = [];
  readonly #entity: (RangeEntity | null)[] = [];
  readonly #enter: boolean[] = [];
  #head = 0;
  #tail = 0;
  #delivering = false;

  /** Events queued and not yet delivered. */
  get pending(): number {
    return this.#tail - this.#head;
  }

  /** Queues an event; returns its index for `cancelEnter`. */
  queue(t: RangeTrigger, e: RangeEntity, enter: boolean): number {
    if (enter) t.pendingEnters++;
    const i = this.#tail++;
    this.#trigger[i] = t;
    this.#entity[i] = e;
    this.#enter[i] = enter;
    return i;
  }

  /** Cancels the enter queued at `i` if it is still undelivered; false if it was delivered already. */
  cancelEnter(i: number, t: RangeTrigger, e: RangeEntity): boolean {
    if (i < this.#head || i >= this.#tail || this.#trigger[i] !== t || this.#entity[i] !== e) return false;
    if (!this.#enter[i]) return false;
    this.#trigger[i] = null;
    t.pendingEnters--;
    return true;
  }

  /**
   * Cancels the newest undelivered event of `t` about `e` if it is an enter (a leave pairs with it); false if there
   * is none or it is a leave. Only called while `t` has enters queued, which within one mutating call are a handful.
   */
  cancelLatestEnter(t: RangeTrigger, e: RangeEntity): boolean {
    const qt = this.#trigger, qe = this.#entity;
    for (let i = this.#tail - 1; i >= this.#head; i--) {
      if (qt[i] !== t || qe[i] !== e) continue;
      if (!this.#enter[i]) return false;
      qt[i] = null;
      t.pendingEnters--;
      return true;
    }
    return false;
  }

  /**
   * Delivers the queued events in order to the handlers of triggers still on `list`; does nothing when called from
   * inside a delivery, whose loop delivers what the handlers queue too.
   */
  deliver(list: TriggerList): void {
    if (this.#delivering || this.#head === this.#tail) return;
    this.#delivering = true;
    try {
      while (this.#head < this.#tail) {
        const i = this.#head++;
        const t = this.#trigger[i], e = this.#entity[i]!;
        this.#trigger[i] = null;
        this.#entity[i] = null;
        if (t !== null && this.#enter[i]) t.pendingEnters--;
        if (t === null || t.list !== list) continue;
        if (this.#enter[i]) t.handler.onEnter(e, t);
        else t.handler.onLeave(e, t);
      }
      this.#head = this.#tail = 0;
    } finally {
      this.#delivering = false;
    }
  }
}
