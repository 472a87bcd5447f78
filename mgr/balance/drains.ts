/**
 * The cellapps an operator is draining (POST /api/cellapps/:id/retire), kept
 * in the cellappmgr's database so that a restarted cellappmgr goes on draining
 * them: cellapps keep their ids across its restarts.
 */
import { errorText } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { Db } from "../../core/db/mod.ts";

const KEY = ["cellappmgr", "draining"];

/** Reads the cellapps being drained; an empty set without a database or on a bad record (logged). */
export async function loadDrains(kv: Db | null, log: Logger): Promise<Set<number>> {
  if (!kv) return new Set();
  try {
    const v = (await kv.get<number[]>(KEY)).value;
    if (v === null) return new Set();
    if (!Array.isArray(v) || !v.every((id) => Number.isSafeInteger(id) && id > 0)) {
      log.error(`the cellapps being drained, as stored, are not a list of ids (${JSON.stringify(v)}); none is drained`);
      return new Set();
    }
    return new Set(v);
  } catch (e) {
    log.error(`could not read the cellapps being drained: ${errorText(e)}; none is drained`);
    return new Set();
  }
}

/** Writes the cellapps being drained; a failure is logged (the drain goes on, but not past a restart). */
export async function saveDrains(kv: Db | null, ids: ReadonlySet<number>, log: Logger): Promise<void> {
  if (!kv) return;
  try {
    await kv.set(KEY, [...ids].sort((a, b) => a - b));
  } catch (e) {
    log.error(`could not store the cellapps being drained: ${errorText(e)}`);
  }
}
