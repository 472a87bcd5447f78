/**
 * The witness (docs/architecture.md, "The witness"): exists while a client is attached to a real entity. AoI triggers
 * on the cell's range list add entities to its AoI (and the game may add any entity with addToAoI); each gets a cache
 * slot (entity_cache.ts), queued in a min-heap by priority. Once per tick `update()` writes, within the client's byte
 * budget, the caches whose turn has come (enter, create, events, volatile, detail level, leave) and hands the frame to
 * the sink.
 */
import { AOI_MSG, NO_ALIAS, writeOwnMethod, writeOwnProperty, writeReference } from "../../core/proto/mod.ts";
import { ErrorCode } from "../../core/proto/mod.ts";
import { ByteWriter, type PropertyDef } from "../../core/def/mod.ts";
import { PACKED_XZ_LIMIT } from "../../core/geo/mod.ts";
import type { WitnessCell } from "./host.ts";
import type { Entity, EntityWitness } from "../entity.ts";
import { ALIAS, CACHE_STATES, CacheTable, CREATE_PENDING, DEADLINE, ENTER_PENDING, F } from "./entity_cache.ts";
import { FLAG_GONE, FLAG_MANUAL, FLAG_QUEUED, FLAG_REPLACED, FLAG_TRIGGER } from "./entity_cache.ts";
import { LIFE, REQUEST_PENDING, STATE } from "./entity_cache.ts";
import { historyOf, type OwnClientSink } from "./event_history.ts";
import { CacheQueue } from "./cache_queue.ts";
import { OwedAnswers } from "./owed_answers.ts";
import { RANGE_FLAG_AOI, type RangeEntity, type RangeTrigger } from "../range/mod.ts";
import { WITNESS_DEFAULTS, type WitnessOptions } from "./witness_options.ts";
import { newStats, readRequestUpdates, type WitnessStats } from "./witness_send.ts";
import { frameOf } from "./frame_arena.ts";
import { type WalkHost, walkQueue } from "./witness_walk.ts";
import { captureWitness, restoreWitness, type WitnessParts, type WitnessState } from "./witness_state.ts";

export { configureSpaceAoI, WITNESS_DEFAULTS, type WitnessOptions } from "./witness_options.ts";
export { updateWitnesses } from "./witness_pass.ts";

/** The witness of an entity (its `witness`), if a client is attached. */
export function witnessOf(entity: Entity): Witness | undefined {
  return (entity.witness ?? undefined) as Witness | undefined;
}

/** The witnesses of a cell (its `witnesses`). */
export function witnessesOf(cell: WitnessCell): ReadonlySet<Witness> {
  return cell.witnesses as unknown as ReadonlySet<Witness>;
}

/** A client's view of the world around its entity. */
export class Witness implements WalkHost, OwnClientSink, EntityWitness {
  readonly w: ByteWriter = new ByteWriter(2048);
  readonly stats: WitnessStats = newStats();
  readonly props: PropertyDef[] = [];
  rx = 0;
  ry = 0;
  rz = 0;
  scale = 1;
  readonly opts: Required<Omit<WitnessOptions, "packedScale" | "onBadInput">> & WitnessOptions;
  destroyed = false;
  /** Settings its entity's script set (witness_settings.ts): its own, kept across cells, not the space's. */
  readonly scripted: Set<string> = new Set();
  /** The caches, by slot. */
  readonly t: CacheTable = new CacheTable();
  /** Entity id → slot. */
  readonly #caches = new Map<number, number>();
  /** The caches by priority (cache_queue.ts); walked each tick (witness_walk.ts). */
  readonly queue: CacheQueue = new CacheQueue();
  /** Slots whose enter went out and that wait for the client's request. */
  readonly pending: Set<number> = new Set();
  /** Answers the client owes for caches that are gone. */
  readonly owed: OwedAnswers = new OwedAnswers();
  readonly #own = new ByteWriter(256);
  /** Aliases free to give an entering cache. */
  readonly freeAliases: number[] = [];
  #refSent = false;
  #lastTick = -1;
  #enterTrigger: RangeTrigger | null = null;
  #leaveTrigger: RangeTrigger | null = null;

  /**
   * A new witness (the client enabled entities: onGetWitness), or, `from` a state, the witness its entity brought
   * along from another cell (no callback; see restore).
   */
  constructor(
    readonly entity: Entity,
    opts: WitnessOptions,
    readonly sink: (frame: Uint8Array) => void,
    from?: WitnessState,
  ) {
    if (entity.witness !== null) throw new Error(`${entity.type.name} ${entity.id} already has a witness`);
    if (entity.destroyed) throw new Error(`${entity.type.name} ${entity.id} is destroyed`);
    this.opts = { ...WITNESS_DEFAULTS, ...entity.cell.aoiOptions, ...opts, ...from?.opts };
    let parts: WitnessParts | undefined;
    if (from) restoreWitness(parts = this.#parts(), from, entity.cell, this.#own);
    else {
      const n = Math.max(0, Math.min(255, this.opts.maxAliases));
      for (let i = n - 1; i >= 0; i--) this.freeAliases.push(i);
    }
    historyOf(entity, this.opts.historyHorizonMs).own = this;
    entity.witness = this;
    entity.cell.witnesses.add(this);
    // The triggers' first enters meet the restored caches: those change nothing, and call no onEnteredAoI.
    this.#makeTriggers();
    if (!parts) {
      entity.cell.callScript(entity, "onGetWitness");
      return;
    }
    [this.rx, this.ry, this.rz, this.scale] = parts.reference;
    this.#refSent = parts.reference[4] === 1;
    this.#dropOutside();
  }

  /**
   * Re-creates the witness an entity brought from its old cell (BigWorld's readAoI): the client keeps its view;
   * entities still in range stay without a leave or an enter, the others leave.
   */
  static restore(entity: Entity, state: WitnessState, sink: (frame: Uint8Array) => void): Witness {
    return new Witness(entity, {}, sink, state);
  }

  /** The witness as plain data, to travel with its entity (BigWorld's writeOffloadData). */
  offloadData(): WitnessState {
    return captureWitness(this.#parts());
  }

  /** The entity went to another cell with this witness's state: it ends here without a word to the client. */
  handOver(): void {
    this.#end();
  }

  /**
   * Sends the client a leave for everything it sees, in one frame whatever
   * the budget, and ends: the entity is teleporting and its view is rebuilt
   * where it arrives.
   */
  closeView(): void {
    if (this.destroyed) return;
    for (const s of [...this.#caches.values()]) {
      const e = this.t.entity[s];
      if (!e) continue;
      this.removeFromAoI(e, true);
      this.removeFromAoI(e, false);
    }
    const budget = this.opts.bytesPerTick;
    this.opts.bytesPerTick = Infinity;
    this.#lastTick = NaN; // even if it already sent this tick's frame
    try {
      this.update();
    } finally {
      this.opts.bytesPerTick = budget;
    }
    this.#end();
  }

  #parts(): WitnessParts {
    return {
      entity: this.entity,
      t: this.t,
      caches: this.#caches,
      heap: this.queue.heap,
      pending: this.pending,
      freeAliases: this.freeAliases,
      own: this.#own,
      opts: this.opts,
      scripted: this.scripted,
      stats: this.stats,
      reference: [this.rx, this.ry, this.rz, this.scale, this.#refSent ? 1 : 0],
    };
  }

  /** Takes out the trigger's entities the leave square no longer holds. */
  #dropOutside(): void {
    const keep = this.#leaveTrigger!, t = this.t;
    for (const s of [...this.#caches.values()]) {
      const e = t.entity[s]!;
      if (t.has(s, FLAG_TRIGGER) && !t.has(s, FLAG_GONE) && !keep.has(e)) this.removeFromAoI(e, false);
    }
  }

  /** Entities in the AoI (including those whose leave is still queued). */
  get aoiSize(): number {
    return this.#caches.size;
  }

  /** Whether an entity is in the AoI (not gone). */
  has(e: Entity): boolean {
    const s = this.#caches.get(e.id);
    return s !== undefined && !this.t.has(s, FLAG_GONE);
  }

  /** The cache state of an entity ("ENTER_PENDING", ...), or null when it is not in the AoI. */
  stateOf(e: Entity): string | null {
    const s = this.#caches.get(e.id);
    return s === undefined ? null : CACHE_STATES[this.t.f[s * F + STATE]];
  }

  /** The AoI radius and hysteresis in force. */
  get aoiRadius(): number {
    return this.opts.aoiRadius;
  }
  get hysteresis(): number {
    return this.opts.hysteresis;
  }

  /** Changes the AoI; entities enter and leave as the new square says (hysteresis kept for those inside). */
  setAoIRadius(radius: number, hysteresis: number = this.opts.hysteresis): void {
    if (!(radius > 0) || !(hysteresis >= 0)) {
      throw new RangeError(`witness of ${this.entity.id}: bad AoI radius ${radius} / hysteresis ${hysteresis}`);
    }
    this.opts.aoiRadius = radius;
    this.opts.hysteresis = hysteresis;
    this.#makeTriggers();
    this.#dropOutside();
  }

  #makeTriggers(): void {
    this.#enterTrigger?.remove();
    this.#leaveTrigger?.remove();
    const { aoiRadius: r, hysteresis: h } = this.opts;
    this.scale = this.opts.packedScale ?? (r + h + this.opts.referenceThreshold + 1) / (PACKED_XZ_LIMIT - 0.5);
    this.#refSent = false;
    const rl = this.entity.cell.rangeList, o = { shape: "square", wants: RANGE_FLAG_AOI } as const;
    const enter = (e: RangeEntity) => this.addToAoI(e as Entity, false);
    const leave = (e: RangeEntity) => this.removeFromAoI(e as Entity, false);
    const ignore = () => {};
    if (h > 0) {
      this.#leaveTrigger = rl.addTrigger(this.entity, r + h, { onEnter: ignore, onLeave: leave }, o);
      this.#enterTrigger = rl.addTrigger(this.entity, r, { onEnter: enter, onLeave: ignore }, o);
    } else {
      this.#enterTrigger = this.#leaveTrigger = rl.addTrigger(this.entity, r, { onEnter: enter, onLeave: leave }, o);
    }
  }

  /**
   * Puts an entity in the AoI; `manual` (the game's call) keeps it there whatever the distance. An entity whose
   * type clients never see (no client part) stays out.
   */
  addToAoI(e: Entity, manual = true): void {
    if (e === this.entity || this.destroyed || e.destroyed || !e.type.canBeOnClient) return;
    const t = this.t;
    let s = this.#caches.get(e.id);
    if (s !== undefined && t.entity[s] !== e && !this.#follow(s, e)) return;
    const fresh = s === undefined || t.has(s, FLAG_GONE);
    if (s === undefined) {
      s = t.alloc(e, historyOf(e, this.opts.historyHorizonMs));
      this.#caches.set(e.id, s);
      this.#addToSeen(s);
    }
    t.set(s, manual ? FLAG_MANUAL : FLAG_TRIGGER, true);
    // Back before its leave was sent: the client never needs to know it went.
    t.set(s, FLAG_GONE, false);
    if (fresh) this.entity.cell.callScript(this.entity, "onEnteredAoI", e);
  }

  /**
   * Slot `s` holds another copy of `e`'s id: the ghost a teleported real replaced here, or an entity destroyed and
   * made again (a relog). Unless that copy is still live in the AoI, the slot follows `e` (see CacheTable.follow).
   */
  #follow(s: number, e: Entity): boolean {
    const t = this.t, old = t.entity[s]!;
    if (!old.destroyed && !t.has(s, FLAG_GONE)) return false;
    if (t.follow(s, e, historyOf(e, this.opts.historyHorizonMs)) && !t.has(s, FLAG_QUEUED)) this.#addToSeen(s);
    return true;
  }

  /** Takes an entity out of the AoI; one added both ways stays until both are cleared. */
  removeFromAoI(e: Entity, manual = true): void {
    const t = this.t, s = this.#caches.get(e.id);
    if (s === undefined || t.has(s, FLAG_GONE) || t.entity[s] !== e) return;
    t.set(s, manual ? FLAG_MANUAL : FLAG_TRIGGER, false);
    if (t.has(s, FLAG_MANUAL | FLAG_TRIGGER) && !e.destroyed) return;
    t.set(s, FLAG_GONE, true);
    if (!t.has(s, FLAG_QUEUED)) this.#addToSeen(s);
    this.entity.cell.callScript(this.entity, "onLeftAoI", e);
  }

  /** Client input: a frame of client→server AOI messages. Anything else is bad input. */
  receive(frame: Uint8Array): void {
    const err = readRequestUpdates(frame, (id, life, stamps) => this.requestEntityUpdate(id, life, stamps));
    if (err !== null) this.#bad(err);
  }

  /**
   * The client's answer to an enter: the life and stamps of its cached copy (none: send everything). BigWorld's
   * requestEntityUpdate, with the stamps checked: stamps of another life of the entity (a cache from before it was
   * made again) are normal and ignored, so it is sent whole; of its life, extra ones are dropped and reported, future
   * ones reported and treated as 0 (nothing known: everything of that level is sent), and so are ones the history no
   * longer reaches back to.
   */
  requestEntityUpdate(id: number, life: number, stamps: readonly number[]): void {
    const t = this.t, c = this.#caches.get(id);
    if (c === undefined) {
      // It left before the request arrived; its leave is on the way.
      if (this.owed.take(id)) this.stats.staleRequests++;
      return;
    }
    const type = t.entity[c]!.type, state = t.f[c * F + STATE];
    if (t.has(c, FLAG_REPLACED)) {
      // About the life that is leaving: the new one enters next and is asked for again.
      this.pending.delete(c);
      return;
    }
    if (state !== REQUEST_PENDING) {
      // An answer to an enter of a cache that is gone, crossing this cache's own enter (not sent yet: ENTER_PENDING),
      // or coming after its answer was taken from an older one. The client answers enters in order: what is owed
      // comes first. Anything else is an answer to nothing.
      if (this.owed.take(id) || state === ENTER_PENDING) {
        this.stats.staleRequests++;
        return;
      }
      return this.#bad(`update request for ${type.name} ${id}, which is ${CACHE_STATES[state]}`);
    }
    const h = t.history[c]!, st = t.stamps[c], L = st.length;
    const n = life === t.f[c * F + LIFE] ? stamps.length : 0;
    if (n > L) this.#bad(`client sent ${n} LoD stamps for ${type.name} ${id}; it has ${L} levels`);
    let future = false;
    for (let i = 0; i < L; i++) {
      let s = i < n ? stamps[i] : 0;
      if (!(Number.isSafeInteger(s) && s >= 0 && s <= h.lastSeq)) {
        future = true;
        s = 0;
      } else if (s < h.trimmedTo) s = 0;
      st[i] = s;
    }
    if (future) this.#bad(`stamps for ${type.name} ${id} beyond its last event ${h.lastSeq}: ${stamps}`);
    this.pending.delete(c);
    t.f[c * F + STATE] = CREATE_PENDING;
    if (!t.has(c, FLAG_QUEUED)) this.#addToSeen(c);
  }

  /** Counts answers the client owes this view (one per id), as a teleport hands them from the old view. */
  oweAnswers(ids: readonly number[]): void {
    const due = this.entity.cell.time + this.opts.requestTimeoutMs;
    for (const id of ids) this.owed.owe(id, due);
  }

  /**
   * The answers the client owes this view, one id per answer: of caches waiting for one, and of gone caches whose
   * answer had not come. A teleport hands them to the new view, where they arrive.
   */
  answersOwed(): number[] {
    const ids: number[] = [];
    for (const s of this.pending) ids.push(this.t.entity[s]!.id);
    this.owed.appendTo(ids);
    return ids;
  }

  #bad(what: string): void {
    this.stats.badInputs++;
    const host = this.entity.cell.host;
    if (this.opts.onBadInput) this.opts.onBadInput(what);
    else host.clientError(this.entity, ErrorCode.malformed, AOI_MSG.requestUpdate, what);
  }

  /** OwnClientSink: a change the player's client sees of its own entity (sent with the next frame). */
  ownChange(change: Uint8Array): void {
    writeOwnProperty(this.#own, change);
  }

  /** OwnClientSink: a client method called on the player's own entity. */
  ownMethod(call: Uint8Array): void {
    writeOwnMethod(this.#own, call);
  }

  #addToSeen(s: number): void {
    this.queue.add(this.t, s);
  }

  /** One tick: own-client messages, the reference position, then caches by priority within the byte budget. */
  update(): void {
    if (this.destroyed) return;
    const me = this.entity;
    if (me.destroyed) return this.destroy();
    // Handing over to another cell: its state went with the request; nothing more is sent from here unless it fails.
    if (me.offloading) return;
    // Once per tick, however many times it is called in that tick.
    if (me.cell.time === this.#lastTick) return;
    this.#lastTick = me.cell.time;
    const w = this.w.reset();
    if (this.#own.pos > 0) {
      w.raw(this.#own.bytes());
      this.#own.reset();
    }
    const thr = this.opts.referenceThreshold;
    if (
      !this.#refSent || Math.abs(me.x - this.rx) > thr || Math.abs(me.y - this.ry) > thr ||
      Math.abs(me.z - this.rz) > thr
    ) {
      // Rounded as the client will store it, so both sides add the same relative offsets.
      this.rx = Math.fround(me.x);
      this.ry = Math.fround(me.y);
      this.rz = Math.fround(me.z);
      writeReference(w, this.rx, this.ry, this.rz, this.scale);
      this.#refSent = true;
    }
    if (this.pending.size > 0) this.#checkTimeouts();
    if (this.owed.size > 0) this.owed.expire(this.entity.cell.time);
    walkQueue(this);
    if (w.pos > 0) {
      this.stats.frames++;
      this.stats.bytes += w.pos;
      this.sink(frameOf(w));
    }
  }

  #checkTimeouts(): void {
    const now = this.entity.cell.time;
    for (const s of this.pending) {
      if (now < this.t.f[s * F + DEADLINE]) continue;
      const e = this.t.entity[s]!;
      this.stats.timeouts++;
      this.entity.cell.host.log.debug(
        `witness of ${this.entity.id}: no update request for ${e.type.name} ${e.id} in ${this.opts.requestTimeoutMs} ms; creating it whole`,
      );
      this.requestEntityUpdate(e.id, 0, []);
    }
  }

  /** Frees slot `s` (its leave was sent, or it never entered): its alias, and the answer owed for it if any. */
  dropCache(s: number): void {
    const t = this.t, alias = t.f[s * F + ALIAS];
    if (alias !== NO_ALIAS) this.freeAliases.push(alias);
    const id = t.entity[s]!.id;
    if (this.pending.delete(s)) this.owed.owe(id, t.f[s * F + DEADLINE]);
    this.#caches.delete(id);
    t.free(s);
  }

  /** Ends the witness (the client detached or the entity went): triggers off, caches dropped, onLoseWitness. */
  destroy(): void {
    if (this.destroyed) return;
    this.#end();
    this.entity.cell.callScript(this.entity, "onLoseWitness");
  }

  #end(): void {
    this.destroyed = true;
    this.#enterTrigger?.remove();
    this.#leaveTrigger?.remove();
    this.#enterTrigger = this.#leaveTrigger = null;
    this.#caches.clear();
    this.t.clear();
    this.queue.clear();
    this.pending.clear();
    const h = historyOf(this.entity);
    if (h.own === this) h.own = null;
    this.entity.witness = null;
    this.entity.cell.witnesses.delete(this);
  }
}
