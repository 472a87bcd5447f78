/**
 * Reading a records message (Channel.record): the whole batch is read and checked before any record is acted on, so
 * that a bad record refuses the batch and nothing of it is half done.
 */
import { errorText } from "../errors.ts";
import { ByteReader } from "../bytes/mod.ts";

/** Whether `v` is an integer from `min` to `max`: how a record's numbers are checked. */
export function isIntIn(v: number, min: number, max: number): boolean {
  return Number.isInteger(v) && v >= min && v <= max;
}

/**
 * Reads every record of `records` with `readOne` (which throws, saying why, at a bad one), then calls `each` for them
 * in order; returns why the batch was refused (nothing acted on), or null.
 */
export function readRecords<T>(
  records: Uint8Array,
  readOne: (r: ByteReader) => T,
  each: (rec: T) => void,
): string | null {
  const r = new ByteReader(records);
  const out: T[] = [];
  try {
    while (r.remaining > 0) out.push(readOne(r));
  } catch (e) {
    return `record ${out.length}: ${errorText(e)}`;
  }
  for (const rec of out) each(rec);
  return null;
}
