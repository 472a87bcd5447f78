/**
 * A drainable history of change records with event numbers: the owner's view
 * of what changed. sendLatestOnly properties keep only their newest change.
 */
import { ArrayType } from "./compound.ts";
import { ChangeRecord, ChangeSink } from "./container.ts";
import { PropertyDef } from "./model.ts";
import { typeAtPath } from "./paths.ts";

/** A change record with its event number. */
export interface HistoryEntry extends ChangeRecord {
  readonly seq: number;
  /** The property's detail level (for LoD filtering by a witness). */
  readonly detailLevel: number;
}

/**
 * Records changes (copying their values) for properties whose audiences meet
 * `mask` (see AUD; 0xff records everything). Use as a container's sink.
 */
export class ChangeLog implements ChangeSink {
  readonly mask: number;
  private entries: (HistoryEntry | null)[] = [];
  private live = 0;
  private readonly latest = new Map<number, number>();
  /** The number the next change gets. */
  nextSeq = 1;

  constructor(mask = 0xff) {
    this.mask = mask;
  }

  /** ChangeSink: copies and keeps the change. */
  onChange(
    prop: PropertyDef,
    path: readonly number[],
    value: unknown,
    start: number,
    end: number,
  ): void {
    if ((prop.mask & this.mask) === 0) return;
    const t = typeAtPath(prop.type, path);
    const copy = start < 0 ? t.clone(value) : (value as unknown[]).map((v) => (t as ArrayType).of.clone(v));
    const entry: HistoryEntry = {
      kind: start < 0 ? "set" : "slice",
      index: prop.index,
      path: path.length ? path.slice() : [],
      value: copy,
      start,
      end,
      seq: this.nextSeq++,
      detailLevel: prop.detailLevel,
    };
    if (prop.sendLatestOnly) {
      const at = this.latest.get(prop.index);
      if (at !== undefined && this.entries[at] !== null) {
        this.entries[at] = null;
        this.live--;
      }
      this.latest.set(prop.index, this.entries.length);
    }
    this.entries.push(entry);
    this.live++;
  }

  /** How many changes are held. */
  get size(): number {
    return this.live;
  }

  /** The held changes in order, oldest first. */
  records(): HistoryEntry[] {
    return this.entries.filter((e): e is HistoryEntry => e !== null);
  }

  /** The held changes with an event number above `seq`. */
  since(seq: number): HistoryEntry[] {
    return this.records().filter((e) => e.seq > seq);
  }

  /** Returns the held changes and forgets them. */
  drain(): HistoryEntry[] {
    const out = this.records();
    this.entries = [];
    this.live = 0;
    this.latest.clear();
    return out;
  }

  /** Forgets changes numbered `seq` or lower (history trimming). */
  trim(seq: number): void {
    const keep = this.records().filter((e) => e.seq > seq);
    this.entries = keep;
    this.live = keep.length;
    this.latest.clear();
    keep.forEach((e, i) => this.latest.set(e.index, i));
  }
}
