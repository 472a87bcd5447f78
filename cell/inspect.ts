/** What the admin API reads of a real entity: its cell properties with their flags, as JSON. */
import type { PropertyValue } from "../core/wire/mod.ts";
import type { Cell } from "./cell.ts";

/** The cell properties of real entity `id` in one of `cells`, or null when none holds its real. */
export function entityProperties(cells: Iterable<Cell>, id: number): PropertyValue[] | null {
  for (const cell of cells) {
    const e = cell.entities.get(id);
    if (!e || !e.isReal || e.destroyed) continue;
    const c = e.container;
    return c.type.properties.filter((p) => c.holds(p)).map((p) => ({
      name: p.name,
      flags: p.flags,
      type: p.type.name,
      value: jsonSafe(p.type.toJSON(c.raw(p.index))),
    }));
  }
  return null;
}

/** A value JSON can carry: 64-bit integers (bigint) become strings, as JSON numbers would lose their digits. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === "bigint") return v.toString();
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [String(k), jsonSafe(x)]));
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, jsonSafe(x)]));
  }
  if (typeof v === "number" && !Number.isFinite(v)) return String(v);
  return v;
}
