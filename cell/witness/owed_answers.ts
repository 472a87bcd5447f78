/**
 * Answers to enters that a witness's client still owes for caches that are gone (the entity left, or another life of
 * it replaced it, before the answer came), by entity id, each as the cell time it is due by. Such an answer is stale
 * when it comes, not bad input. Past its time it is forgotten, as a cache waiting for it would have timed out, so a
 * client that never answers holds no more of them than a request timeout's worth of enters.
 */
export class OwedAnswers {
  readonly #due = new Map<number, number[]>();

  /** How many entity ids have answers owed. */
  get size(): number {
    return this.#due.size;
  }

  /** Takes one owed answer for `id` (the oldest); false when none is owed. */
  take(id: number): boolean {
    const due = this.#due.get(id);
    if (due === undefined) return false;
    due.shift();
    if (due.length === 0) this.#due.delete(id);
    return true;
  }

  /** Counts one answer the client owes for `id`, due by cell time `due`. */
  owe(id: number, due: number): void {
    const list = this.#due.get(id);
    if (list) list.push(due);
    else this.#due.set(id, [due]);
  }

  /** Forgets the answers due at or before `now`. */
  expire(now: number): void {
    for (const [id, due] of this.#due) {
      while (due.length > 0 && due[0] <= now) due.shift();
      if (due.length === 0) this.#due.delete(id);
    }
  }

  /** Appends the ids owed to `ids`, one per answer. */
  appendTo(ids: number[]): void {
    for (const [id, due] of this.#due) for (let i = 0; i < due.length; i++) ids.push(id);
  }
}
