/** The small typed event emitter a client's world model tells its listeners through (ClientWorld). */

/** A listener of the world's events of one kind. */
export type WorldListener<T> = (ev: T) => void;

/** A small typed event emitter: one event object per kind (the world's events). */
export class WorldEmitter<M> {
  readonly #on = new Map<keyof M, WorldListener<never>[]>();

  /** Adds a listener; returns its remover. */
  on<K extends keyof M>(kind: K, fn: WorldListener<M[K]>): () => void {
    const list = this.#on.get(kind) ?? [];
    list.push(fn as WorldListener<never>);
    this.#on.set(kind, list);
    return () => {
      const i = list.indexOf(fn as WorldListener<never>);
      if (i >= 0) list.splice(i, 1);
    };
  }

  /** Whether anyone listens (so that callers can skip building events). */
  has(kind: keyof M): boolean {
    return (this.#on.get(kind)?.length ?? 0) > 0;
  }

  /** Calls the listeners of a kind. */
  emit<K extends keyof M>(kind: K, ev: M[K]): void {
    const list = this.#on.get(kind);
    if (list) { for (const fn of list) (fn as WorldListener<M[K]>)(ev); }
  }
}
