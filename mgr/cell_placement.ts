/** Which cellapps a new cell goes to (BigWorld's findBestCellApp): the least loaded, preferring a host when asked. */
import type { Member } from "./registry.ts";
import type { Space } from "./space.ts";

/** Loads are compared in steps of 1/LOAD_STEPS of a core. */
const LOAD_STEPS = 10;

/**
 * findBestCellApp, `n` times: the least loaded of `cellapps` (fewest cells of `spaces` on a tie), with those on
 * `preferredHost` first when one is asked for; cellapps being drained only when no other is left.
 */
export function bestCellApps(
  spaces: Iterable<Space>,
  cellapps: Member[],
  draining: ReadonlySet<number>,
  n: number,
  preferredHost: string | null,
): Member[] {
  const cellsOf = new Map<number, number>();
  for (const s of spaces) {
    for (const c of s.cells()) cellsOf.set(c.cellapp, (cellsOf.get(c.cellapp) ?? 0) + 1);
  }
  const score = (m: Member) => (preferredHost !== null && hostOf(m.address) === preferredHost ? 1 : 0);
  // Loads are measured CPU shares: ones within about 10 % of a core are noise, and the cell count decides.
  const level = (m: Member) => Math.floor(m.load * LOAD_STEPS);
  const staying = cellapps.filter((m) => !draining.has(m.id));
  return (staying.length > 0 ? staying : cellapps).sort((a, b) =>
    score(b) - score(a) || level(a) - level(b) || (cellsOf.get(a.id) ?? 0) - (cellsOf.get(b.id) ?? 0) ||
    a.id - b.id
  ).slice(0, n);
}

function hostOf(address: string): string {
  return address.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
}
