/**
 * The witness (seed 000): exists while a client is attached to a real entity. AoI triggers on the cell's range list
 * add entities to its AoI (and the game may add any entity with addToAoI); each gets an EntityCache, queued in a
 * min-heap by priority. Once per tick `update()` writes, within the client's byte budget, the caches whose turn has
 * come (enter, create, events, volatile, detail level, leave) and hands the frame to the sink.
 */
import { AOI_MSG, NO_ALIAS, writeOwnMethod, writeOwnProperty, writeReference } from "../core/def/aoi_protocol.ts";
import { ByteReader, ByteWriter, type PropertyDef } from "../core/def/mod.ts";
import type { Cell } from "./cell.ts";
import type { Entity } from "./entity.ts";
import { CACHE_STATES, CREATE_PENDING, ENTER_PENDING, EntityCache, REQUEST_PENDING } from "./entity_cache.ts";
import { historyOf, type OwnClientSink } from "./event_history.ts";
import { PriorityHeap } from "./priority_queue.ts";
import { RANGE_FLAG_AOI, type RangeEntity } from "./range_node.ts";
import type { RangeTrigger } from "./range_trigger.ts";
import { PACKED_XZ_LIMIT } from "../core/geo/packed.ts";
import { callScript, spaceOptions, WITNESS_DEFAULTS, type WitnessOptions } from "./witness_options.ts";
import {
  hasVolatile,
  newStats,
  type SendContext,
  sendCreate,
  sendEnter,
  sendLeave,
  sendUpdate,
  type WitnessStats,
} from "./witness_send.ts";

export { callScript, configureSpaceAoI, WITNESS_DEFAULTS, type WitnessOptions } from "./witness_options.ts";

/** Below this distance (m) two entities count as coincident: priority delta 1. */
const COINCIDENT = 1e-3;

const cellWitnesses = new WeakMap<Cell, Set<Witness>>();
const entityWitness = new WeakMap<Entity, Witness>();

/** The witness of an entity, if a client is attached. */
export function witnessOf(entity: Entity): Witness | undefined {
  return entityWitness.get(entity);
}

/** Runs every witness of a cell once; the cell calls it at the end of each tick. */
export function updateWitnesses(cell: Cell): void {
  const set = cellWitnesses.get(cell);
  if (set) { for (const w of set) w.update(); }
}

/** The witnesses of a cell. */
export function witnessesOf(cell: Cell): ReadonlySet<Witness> {
  return cellWitnesses.get(cell) ?? new Set();
}

/** A client's view of the world around its entity. */
export class Witness implements SendContext, OwnClientSink {
  readonly w: ByteWriter = new ByteWriter(2048);
  readonly stats: WitnessStats = newStats();
  readonly props: PropertyDef[] = [];
  rx = 0;
  ry = 0;
  rz = 0;
  scale = 1;
  readonly opts: Required<Omit<WitnessOptions, "packedScale" | "onBadInput">> & WitnessOptions;
  destroyed = false;
  readonly #caches = new Map<number, EntityCache>();
  readonly #heap = new PriorityHeap<EntityCache>();
  readonly #sent: EntityCache[] = [];
  readonly #pending = new Set<EntityCache>();
  readonly #own = new ByteWriter(256);
  readonly #freeAliases: number[] = [];
  #refSent = false;
  #lastTick = -1;
  #enterTrigger: RangeTrigger | null = null;
  #leaveTrigger: RangeTrigger | null = null;

  constructor(readonly entity: Entity, opts: WitnessOptions, readonly sink: (frame: Uint8Array) => void) {
    if (entityWitness.has(entity)) throw new Error(`${entity.type.name} ${entity.id} already has a witness`);
    if (entity.destroyed) throw new Error(`${entity.type.name} ${entity.id} is destroyed`);
    this.opts = { ...WITNESS_DEFAULTS, ...spaceOptions.get(entity.cell), ...opts };
    const n = Math.max(0, Math.min(255, this.opts.maxAliases));
    for (let i = n - 1; i >= 0; i--) this.#freeAliases.push(i);
    historyOf(entity, this.opts.historyHorizonMs).own = this;
    entityWitness.set(entity, this);
    let set = cellWitnesses.get(entity.cell);
    if (!set) cellWitnesses.set(entity.cell, set = new Set());
    set.add(this);
    this.#makeTriggers();
    callScript(entity, "onGetWitness");
  }

  /** Entities in the AoI (including those whose leave is still queued). */
  get aoiSize(): number {
    return this.#caches.size;
  }

  /** Whether an entity is in the AoI (not gone). */
  has(e: Entity): boolean {
    const c = this.#caches.get(e.id);
    return c !== undefined && !c.gone;
  }

  /** The cache state of an entity ("ENTER_PENDING", ...), or null when it is not in the AoI. */
  stateOf(e: Entity): string | null {
    const c = this.#caches.get(e.id);
    return c ? CACHE_STATES[c.state] : null;
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
    const keep = this.#leaveTrigger!;
    for (const c of [...this.#caches.values()]) {
      if (c.byTrigger && !c.gone && !keep.has(c.entity)) this.removeFromAoI(c.entity, false);
    }
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

  /** Puts an entity in the AoI; `manual` (the game's call) keeps it there whatever the distance. */
  addToAoI(e: Entity, manual = true): void {
    if (e === this.entity || this.destroyed || e.destroyed) return;
    let c = this.#caches.get(e.id);
    if (c !== undefined && c.entity !== e) return;
    const fresh = c === undefined || c.gone;
    if (c === undefined) {
      c = new EntityCache(e, historyOf(e, this.opts.historyHorizonMs));
      this.#caches.set(e.id, c);
      this.#addToSeen(c);
    }
    if (manual) c.manual = true;
    else c.byTrigger = true;
    // Back before its leave was sent: the client never needs to know it went.
    c.gone = false;
    if (fresh) callScript(this.entity, "onEnteredAoI", e);
  }

  /** Takes an entity out of the AoI; one added both ways stays until both are cleared (seed 000). */
  removeFromAoI(e: Entity, manual = true): void {
    const c = this.#caches.get(e.id);
    if (c === undefined || c.gone || c.entity !== e) return;
    if (manual) c.manual = false;
    else c.byTrigger = false;
    if ((c.manual || c.byTrigger) && !e.destroyed) return;
    c.gone = true;
    if (!c.inQueue) this.#addToSeen(c);
    callScript(this.entity, "onLeftAoI", e);
  }

  /** Client input: a frame of client→server AOI messages. Anything else is bad input. */
  receive(frame: Uint8Array): void {
    const r = new ByteReader(frame);
    try {
      while (r.remaining > 0) {
        const id = r.u8();
        if (id !== AOI_MSG.REQUEST_UPDATE) return this.#bad(`unexpected AOI message id ${id} from the client`);
        const eid = r.varint(), n = r.varint();
        if (n > r.remaining) return this.#bad(`entity ${eid}: ${n} stamps exceed the message`);
        const stamps = new Array<number>(n);
        for (let i = 0; i < n; i++) stamps[i] = r.varint();
        this.requestEntityUpdate(eid, stamps);
      }
    } catch (e) {
      this.#bad(`malformed AOI message: ${e instanceof Error ? e.message : e}`);
    }
  }

  /**
   * The client's answer to an enter: the stamps of its cached copy (none: send everything). Seed 000's
   * requestEntityUpdate, with the stamps checked: extra ones dropped and reported, future ones reported and treated
   * as 0 (nothing known: everything of that level is sent), and so are ones the history no longer reaches back to.
   */
  requestEntityUpdate(id: number, stamps: readonly number[]): void {
    const c = this.#caches.get(id);
    if (c === undefined) return; // It left before the request arrived; its leave is on the way.
    if (c.state !== REQUEST_PENDING) {
      return this.#bad(`update request for ${c.entity.type.name} ${id}, which is ${CACHE_STATES[c.state]}`);
    }
    const h = c.history, L = c.levels;
    if (stamps.length > L) {
      this.#bad(`client sent ${stamps.length} LoD stamps for ${c.entity.type.name} ${id}; it has ${L} levels`);
    }
    let future = false;
    for (let i = 0; i < L; i++) {
      let s = i < stamps.length ? stamps[i] : 0;
      if (!(Number.isSafeInteger(s) && s >= 0 && s <= h.lastSeq)) {
        future = true;
        s = 0;
      } else if (s < h.trimmedTo) s = 0;
      c.lodStamps[i] = s;
    }
    if (future) this.#bad(`stamps for ${c.entity.type.name} ${id} beyond its last event ${h.lastSeq}: ${stamps}`);
    this.#pending.delete(c);
    c.state = CREATE_PENDING;
    if (!c.inQueue) this.#addToSeen(c);
  }

  #bad(what: string): void {
    this.stats.badInputs++;
    if (this.opts.onBadInput) this.opts.onBadInput(what);
    else this.entity.cell.host.log.warn(`witness of ${this.entity.type.name} ${this.entity.id}: ${what}`);
  }

  /** OwnClientSink: a change the player's client sees of its own entity (sent with the next frame). */
  ownChange(change: Uint8Array): void {
    writeOwnProperty(this.#own, change);
  }

  /** OwnClientSink: a client method called on the player's own entity. */
  ownMethod(call: Uint8Array): void {
    writeOwnMethod(this.#own, call);
  }

  #addToSeen(c: EntityCache): void {
    const top = this.#heap.peek();
    c.priority = top === undefined ? 0 : top.priority;
    c.inQueue = true;
    this.#heap.push(c);
  }

  /** One tick: own-client messages, the reference position, then caches by priority within the byte budget. */
  update(): void {
    if (this.destroyed) return;
    const me = this.entity;
    if (me.destroyed) return this.destroy();
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
    if (this.#pending.size > 0) this.#checkTimeouts();
    this.#sendQueue();
    if (w.pos > 0) {
      this.stats.frames++;
      this.stats.bytes += w.pos;
      this.sink(w.toBytes());
    }
  }

  #checkTimeouts(): void {
    const now = this.entity.cell.time;
    for (const c of this.#pending) {
      if (now < c.deadline) continue;
      this.stats.timeouts++;
      this.entity.cell.host.log.debug(
        `witness of ${this.entity.id}: no update request for ${c.entity.type.name} ${c.entity.id} in ${this.opts.requestTimeoutMs} ms; creating it whole`,
      );
      this.requestEntityUpdate(c.entity.id, []);
    }
  }

  #sendQueue(): void {
    const heap = this.#heap, sent = this.#sent, w = this.w, me = this.entity;
    const { bytesPerTick: budget, distanceWeighting, weighting, deltaGrowthThrottle: throttle } = this.opts;
    if (heap.size === 0) return;
    const maxPriority = heap.minPriority + this.opts.maxPriorityDelta;
    let first = true;
    while (heap.size > 0 && heap.minPriority < maxPriority && (w.pos < budget || first)) {
      const c = heap.pop();
      c.inQueue = false;
      const mark = w.pos;
      if (c.entity.destroyed && !c.gone) this.removeFromAoI(c.entity, true);
      if (c.gone) {
        if (c.state !== ENTER_PENDING) {
          sendLeave(this, c);
          if (w.pos > budget && !first) {
            w.pos = mark;
            c.inQueue = true;
            heap.push(c);
            break;
          }
        }
        this.#delete(c);
      } else if (c.state === ENTER_PENDING) {
        c.alias = hasVolatile(c) && this.#freeAliases.length > 0 ? this.#freeAliases.pop()! : NO_ALIAS;
        c.state = REQUEST_PENDING;
        c.deadline = me.cell.time + this.opts.requestTimeoutMs;
        this.#pending.add(c);
        sendEnter(this, c);
        if (w.pos > budget && !first) {
          w.pos = mark;
          this.#delete(c);
          c.state = ENTER_PENDING;
          this.#caches.set(c.entity.id, c);
          c.inQueue = true;
          heap.push(c);
          break;
        }
      } else if (c.state !== REQUEST_PENDING) {
        const e = c.entity, dx = e.x - me.x, dy = e.y - me.y, dz = e.z - me.z;
        const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
        // Snapshot in locals, to take the element back if it overflows the budget. The LoD stamps need none: only
        // those at or beyond the detail level are written here, and those are implied by lastEventNumber.
        const state = c.state, last = c.lastEventNumber, level = c.detailLevel;
        const vx = c.vx, vy = c.vy, vz = c.vz, vyaw = c.vyaw, vpitch = c.vpitch, vroll = c.vroll;
        if (state === CREATE_PENDING) sendCreate(this, c, dist);
        else sendUpdate(this, c, dist);
        if (w.pos > budget && !first) {
          // It does not fit: take it back untouched and stop here; it keeps its place for the next tick.
          w.pos = mark;
          c.state = state;
          c.lastEventNumber = last;
          c.setDetailLevel(level);
          c.vx = vx;
          c.vy = vy;
          c.vz = vz;
          c.vyaw = vyaw;
          c.vpitch = vpitch;
          c.vroll = vroll;
          c.inQueue = true;
          heap.push(c);
          break;
        }
        this.stats.sends++;
        let delta = dist < COINCIDENT ? 1 : (dist * distanceWeighting + 1) * weighting;
        const cap = throttle * c.lastDelta;
        if (delta > cap) delta = cap;
        c.lastDelta = delta;
        c.priority += delta;
        c.inQueue = true;
        sent.push(c);
      }
      if (w.pos > mark) first = false;
    }
    // Seed 000: when everything was sent, priorities restart at 0; otherwise nothing sent may fall behind the
    // earliest unsent priority, so entities due several times a tick do not lag behind virtual time.
    const allSent = heap.size === 0;
    const earliest = allSent ? 0 : heap.minPriority;
    for (let i = 0; i < sent.length; i++) {
      const c = sent[i];
      if (allSent || c.priority < earliest) c.priority = earliest;
      heap.push(c);
    }
    sent.length = 0;
  }

  #delete(c: EntityCache): void {
    if (c.alias !== NO_ALIAS) this.#freeAliases.push(c.alias);
    c.alias = NO_ALIAS;
    this.#pending.delete(c);
    this.#caches.delete(c.entity.id);
  }

  /** Ends the witness (the client detached or the entity went): triggers off, caches dropped, onLoseWitness. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.#enterTrigger?.remove();
    this.#leaveTrigger?.remove();
    this.#enterTrigger = this.#leaveTrigger = null;
    this.#caches.clear();
    this.#heap.clear();
    this.#pending.clear();
    const h = historyOf(this.entity);
    if (h.own === this) h.own = null;
    entityWitness.delete(this.entity);
    cellWitnesses.get(this.entity.cell)?.delete(this);
    callScript(this.entity, "onLoseWitness");
  }
}
