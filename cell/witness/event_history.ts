/**
 * An entity's event history (docs/architecture.md, "The witness"): every change of a property other clients see, and
 * every client method call to other clients, numbered in one sequence, encoded once and read by every witness that has
 * the entity in its AoI. It also keeps, per property, the number of the event that last changed it
 * (propertyEventStamps), which is what the detail-level and cache round-trip sends compare against. Own-client changes
 * and calls go straight to the entity's own witness, if it has one.
 */
import {
  AUD,
  ByteWriter,
  type ChangeSink,
  type EntityType,
  type MethodDef,
  type PropertyDef,
  writeChange,
} from "../../core/def/mod.ts";
import { writeMethodCall } from "../../core/proto/mod.ts";
import type { HistoryState } from "../../core/wire/mod.ts";
import { R_SEQ, rows } from "./entity_rows.ts";
import { scratch as processScratch } from "../../core/scratch.ts";

export type { HistoryState } from "../../core/wire/mod.ts";

/** One recorded event. */
export interface HistoryEvent {
  /** Event number, from 1 up, per entity. */
  readonly seq: number;
  /** A property change (its index in `prop`) or a method call (prop -1). */
  readonly prop: number;
  /** Property: its detail level (sent while the observer's level is <= it). Method: -1. */
  readonly level: number;
  /** Method: the detail distance within which it is sent (Infinity: anywhere in the AoI). */
  readonly distance: number;
  /** The encoded change (client index space) or call. */
  readonly bytes: Uint8Array;
}

/** Receives what the entity's own client should see (implemented by its witness). */
export interface OwnClientSink {
  ownChange(change: Uint8Array): void;
  ownMethod(call: Uint8Array): void;
}

/** Default history horizon (about 60 s, so that everything queued gets a turn within it). */
export const DEFAULT_HISTORY_HORIZON_MS = 60_000;

/** The process's buffer for encoding events (core/scratch.ts). */
const scratch: ByteWriter = processScratch.writers.historyEvent;

/**
 * Life numbers (epochs of event numbering): 1..2^32-1, handed out in turn from a random start (the process's, in
 * core/scratch.ts), so that two lives of one entity id (a relog, a restore on another cellapp) are told apart. 0
 * means "no life": a client with nothing cached.
 */
const lives = processScratch.lives;

/** A number for a new life of an entity's event numbering. */
export function newLife(): number {
  const l = lives.next;
  lives.next = l >= 0xffff_ffff ? 1 : l + 1;
  return l;
}

/**
 * The event history of one entity; attach it as its cell container's sink (historyOf does). Trimming is BigWorld's
 * two-phase trim, run at most once per horizon: each trim drops what was already there at the previous trim, so an
 * event is kept for at least one horizon.
 */
export class EventHistory implements ChangeSink {
  /**
   * Number of the newest event. Event 1 stands for the state when the history began, so that stamp 0 always means
   * "knows nothing" and every property is newer than it.
   */
  get lastSeq(): number {
    return this.#lastSeq;
  }
  set lastSeq(v: number) {
    this.#lastSeq = v;
    rows.a[this.row + R_SEQ] = v;
  }
  #lastSeq = 1;
  /**
   * The life of this numbering (its epoch): it changes whenever the numbering restarts (the entity is created,
   * made again at a relog or a restore), and a ghost and a teleported real go on with their real's. Clients cache
   * stamps with it, so that stamps of another life are never taken for this one's.
   */
  life: number = newLife();
  /** Highest event number trimmed away: a reader whose last event is below it has missed events. */
  trimmedTo = 0;
  /** By property index: number of the event that last changed it (1: not since the history began). */
  readonly propStamps: number[];
  /** The entity's own witness, or null. */
  own: OwnClientSink | null = null;
  /** Told of every new event (for the real to forward to its ghosts). */
  listener: ((ev: HistoryEvent) => void) | null = null;
  /** Events in order, oldest at `head`; null where a sendLatestOnly event was replaced. */
  readonly events: (HistoryEvent | null)[] = [];
  head = 0;
  #base = 0;
  #trimTo = 0;
  #lastTrim: number;
  readonly #latest = new Map<number, number>();

  constructor(
    readonly type: EntityType,
    /** The sink that was on the container before (kept in the chain). */
    readonly next: ChangeSink | null,
    /** Game time in ms. */
    readonly clock: () => number,
    /**
     * Its entity, whose row (entity_rows.ts) mirrors lastSeq for the witnesses that send the entity. Kept, as the
     * row is the entity's and is freed when the entity is collected: a history outliving it would write a row
     * another entity may have by then.
     */
    readonly owner: { readonly row: number },
    public horizonMs: number = DEFAULT_HISTORY_HORIZON_MS,
  ) {
    this.propStamps = new Array(type.properties.length).fill(1);
    this.#lastTrim = clock();
  }

  /** Its entity's row in entity_rows.ts, where lastSeq starts at 1 as this history does. */
  get row(): number {
    return this.owner.row;
  }

  /** Number of events held. */
  get size(): number {
    let n = 0;
    for (let i = this.head; i < this.events.length; i++) if (this.events[i] !== null) n++;
    return n;
  }

  /** ChangeSink: numbers and keeps other-client changes, passes own-client ones to the own witness. */
  onChange(prop: PropertyDef, path: readonly number[], value: unknown, start: number, end: number): void {
    const other = (prop.mask & AUD.otherClients) !== 0;
    const own = (prop.mask & AUD.ownClient) !== 0 && this.own !== null;
    if (other || own) {
      writeChange(scratch.reset(), prop, path, value, start, end, "client");
      const bytes = scratch.toBytes();
      if (own) this.own!.ownChange(bytes);
      if (other) this.#add(prop.index, prop.detailLevel, Infinity, bytes, prop.sendLatestOnly);
    }
    this.next?.onChange(prop, path, value, start, end);
  }

  /**
   * A client method call (ownClient / otherClients / allClients): encoded once, checked against the declared
   * argument types; the other-clients part joins the history so it stays in order with property changes.
   */
  callClientMethod(name: string, args: readonly unknown[], toOwn: boolean, toOthers: boolean): void {
    const method: MethodDef | undefined = this.type.findMethod("client", name);
    if (!method) throw new Error(`${this.type.name} has no client method '${name}'`);
    writeMethodCall(scratch.reset(), this.type, method, args);
    const bytes = scratch.toBytes();
    if (toOwn && this.own !== null) this.own.ownMethod(bytes);
    if (toOthers) this.#add(-1, -1, method.detailDistance ?? Infinity, bytes, false);
  }

  /** Adds an event numbered elsewhere (a ghost replaying its real's history); numbers must increase. */
  addRemote(ev: HistoryEvent, latestOnly = false): void {
    if (ev.seq <= this.lastSeq) throw new RangeError(`history event ${ev.seq} is not after ${this.lastSeq}`);
    this.lastSeq = ev.seq - 1;
    this.#add(ev.prop, ev.level, ev.distance, ev.bytes, latestOnly);
  }

  #add(prop: number, level: number, distance: number, bytes: Uint8Array, latestOnly: boolean): void {
    this.maybeTrim();
    const ev: HistoryEvent = { seq: ++this.lastSeq, prop, level, distance, bytes };
    if (prop >= 0) this.propStamps[prop] = ev.seq;
    if (latestOnly) {
      // A sendLatestOnly property keeps one event, its newest.
      const at = this.#latest.get(prop);
      if (at !== undefined && at - this.#base >= this.head) this.events[at - this.#base] = null;
      this.#latest.set(prop, this.#base + this.events.length);
    }
    this.events.push(ev);
    this.listener?.(ev);
  }

  /** Runs the two-phase trim when a horizon has passed since the last one. */
  maybeTrim(): void {
    const now = this.clock();
    if (now - this.#lastTrim < this.horizonMs) return;
    this.#lastTrim = now;
    this.trim();
  }

  /** The two-phase trim: drops the events numbered up to the newest of the previous trim, then remembers today's. */
  trim(): void {
    const ev = this.events;
    while (this.head < ev.length) {
      const e = ev[this.head];
      if (e !== null && e.seq > this.#trimTo) break;
      if (e !== null) this.trimmedTo = e.seq;
      ev[this.head++] = null;
    }
    this.#trimTo = this.lastSeq;
    if (this.head > 32 && this.head * 2 > ev.length) {
      ev.splice(0, this.head);
      this.#base += this.head;
      this.head = 0;
    }
  }

  /** Index in `events` of the first event numbered above `seq` (events.length when none). */
  indexAfter(seq: number): number {
    const ev = this.events;
    let i = ev.length - 1;
    for (; i >= this.head; i--) {
      const e = ev[i];
      if (e !== null && e.seq <= seq) break;
    }
    return i + 1;
  }
}

/** The history as plain data: its life, numbers and the events it still holds. */
export function historyState(h: EventHistory): HistoryState {
  const events: HistoryState["events"] = [];
  for (let i = h.head; i < h.events.length; i++) {
    const ev = h.events[i];
    if (ev) events.push([ev.seq, ev.prop, ev.level, ev.distance, ev.bytes]);
  }
  return { life: h.life, lastSeq: h.lastSeq, trimmedTo: h.trimmedTo, propStamps: [...h.propStamps], events };
}

/**
 * Makes a history that has recorded nothing yet go on from `state` (a teleported real's, at its destination): same
 * life, same numbers, so what observers and cached clients hold of the entity stays good.
 */
export function continueHistory(h: EventHistory, state: HistoryState): void {
  if (h.lastSeq !== 1 || h.events.length > 0) {
    throw new Error(`the history of a ${h.type.name} already has events; it cannot take over another's numbering`);
  }
  if (state.life !== undefined) h.life = state.life;
  for (const [seq, prop, level, distance, bytes] of state.events) {
    if (seq > h.lastSeq) h.addRemote({ seq, prop, level, distance, bytes });
  }
  h.lastSeq = Math.max(h.lastSeq, state.lastSeq);
  h.trimmedTo = Math.max(h.trimmedTo, state.trimmedTo);
  for (let i = 0; i < h.propStamps.length && i < state.propStamps.length; i++) h.propStamps[i] = state.propStamps[i];
}

/** What historyOf needs of an entity, and where it keeps the history. */
export interface HistoryOwner {
  readonly type: EntityType;
  /** Its row in entity_rows.ts. */
  readonly row: number;
  readonly container: { sink: ChangeSink | null };
  readonly cell: { readonly time: number };
  /** Its event history, once historyOf made it. */
  history: EventHistory | null;
}

/**
 * The entity's history, created on first use and chained in as its container's sink. Before that, nothing can
 * hold stamps of the entity, so starting the numbering late loses nothing.
 */
export function historyOf(entity: HistoryOwner, horizonMs?: number): EventHistory {
  let h = entity.history;
  if (h === null) {
    h = new EventHistory(entity.type, entity.container.sink, () => entity.cell.time, entity, horizonMs);
    entity.container.sink = h;
    entity.history = h;
  }
  return h;
}

/** The entity's history if it has one. */
export function existingHistoryOf(entity: HistoryOwner): EventHistory | undefined {
  return entity.history ?? undefined;
}
