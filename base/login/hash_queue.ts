/**
 * The queue every password hash of the baseapp goes through: at most
 * `concurrency` hashes run at once and at most `maxWaiting` wait, so a flood
 * of logins costs a bounded share of the machine and refusals are immediate.
 * Waiting hashes are ordered so that a flood delays nobody else: attempts
 * from addresses and accounts with no recent failures go first, and among
 * equals an address with fewer hashes already queued goes first, so one busy
 * address waits behind its own attempts rather than everyone's.
 */

/** Who a hash is for, as the queue orders it. */
export interface HashClaim {
  /** The address the attempt came from; attempts of one address take turns with other addresses. */
  key: string;
  /** The address or the account failed recently; such attempts wait behind the others. */
  suspect: boolean;
}

/** How many hashes run and wait. */
export interface HashQueueOptions {
  /** Hashes running at once (default 1). */
  concurrency: number;
  /** Hashes waiting at most; beyond that an attempt is refused at once (default 16). */
  maxWaiting: number;
}

/** The defaults of a hash queue. */
export const DEFAULT_HASH_QUEUE: HashQueueOptions = { concurrency: 1, maxWaiting: 16 };

/** A hash was refused because the queue was full (or it was pushed out by a more deserving one). */
export class QueueFullError extends Error {
  override name = "QueueFullError";
  constructor() {
    super("the server is busy checking other logins; try again in a few seconds");
  }
}

/** Counters of what the queue did. */
export interface HashQueueStats {
  /** Tasks started. */
  started: number;
  /** Tasks refused on arrival because the queue was full. */
  refused: number;
  /** Waiting tasks pushed out by a more deserving arrival. */
  evicted: number;
}

interface Waiting {
  suspect: boolean;
  /** Tasks of the same key already in the queue (waiting or running) when this one arrived. */
  share: number;
  seq: number;
  key: string;
  start(): void;
  refuse(e: Error): void;
}

/** Runs tasks (password hashes) with bounded concurrency and a bounded, ordered wait. */
export class HashQueue {
  readonly stats: HashQueueStats = { started: 0, refused: 0, evicted: 0 };
  readonly #o: HashQueueOptions;
  readonly #waiting: Waiting[] = [];
  /** Tasks per key that are waiting or running. */
  readonly #perKey = new Map<string, number>();
  #running = 0;
  #seq = 0;

  constructor(opts: Partial<HashQueueOptions> = {}) {
    this.#o = { ...DEFAULT_HASH_QUEUE, ...opts };
    if (!(this.#o.concurrency >= 1)) throw new Error(`hash queue concurrency must be at least 1`);
    if (!(this.#o.maxWaiting >= 0)) throw new Error(`hash queue maxWaiting must be 0 or more`);
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /** Tasks waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Runs `task` when its turn comes; rejects at once with QueueFullError when there is no room. */
  run<T>(claim: HashClaim, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.#running++;
        this.stats.started++;
        let p: Promise<T>;
        try {
          p = task();
        } catch (e) {
          p = Promise.reject(e);
        }
        const done = () => {
          this.#running--;
          this.#release(claim.key);
          this.#next();
        };
        p.then((v) => {
          done();
          resolve(v);
        }, (e) => {
          done();
          reject(e);
        });
      };
      if (this.#running < this.#o.concurrency && this.#waiting.length === 0) {
        this.#hold(claim.key);
        start();
        return;
      }
      const w: Waiting = {
        suspect: claim.suspect,
        share: this.#perKey.get(claim.key) ?? 0,
        seq: this.#seq++,
        key: claim.key,
        start,
        refuse: reject,
      };
      if (this.#waiting.length >= this.#o.maxWaiting) {
        const worst = this.#worst();
        if (worst === -1 || before(this.#waiting[worst], w)) {
          this.stats.refused++;
          reject(new QueueFullError());
          return;
        }
        const [out] = this.#waiting.splice(worst, 1);
        this.#release(out.key);
        this.stats.evicted++;
        out.refuse(new QueueFullError());
      }
      this.#hold(claim.key);
      this.#waiting.push(w);
    });
  }

  #next(): void {
    while (this.#running < this.#o.concurrency && this.#waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.#waiting.length; i++) {
        if (before(this.#waiting[i], this.#waiting[best])) best = i;
      }
      const [w] = this.#waiting.splice(best, 1);
      w.start();
    }
  }

  /** Index of the waiting task that would run last, or -1. */
  #worst(): number {
    let worst = -1;
    for (let i = 0; i < this.#waiting.length; i++) {
      if (worst === -1 || before(this.#waiting[worst], this.#waiting[i])) worst = i;
    }
    return worst;
  }

  #hold(key: string): void {
    this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1);
  }

  #release(key: string): void {
    const n = (this.#perKey.get(key) ?? 1) - 1;
    if (n <= 0) this.#perKey.delete(key);
    else this.#perKey.set(key, n);
  }
}

/** True when `a` runs before `b`. */
function before(a: Waiting, b: Waiting): boolean {
  if (a.suspect !== b.suspect) return !a.suspect;
  if (a.share !== b.share) return a.share < b.share;
  return a.seq < b.seq;
}
