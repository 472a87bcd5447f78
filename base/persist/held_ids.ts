/**
 * The highest entity id a baseapp's database holds (accounts' entities and
 * saved entities), kept in the database beside them: every commit that stores an
 * id raises it in the same atomic operation, and the baseapp reports it to
 * the cellappmgr when it registers, so that a cellappmgr that lost its own
 * counter never hands such an id out again.
 */
import type { Db, DbAtomic, DbKey } from "../../core/db/mod.ts";
import { withKvRetry } from "./kv_retry.ts";

/** Where the mark is kept. */
export const HELD_IDS_KEY: DbKey = ["ids", "highWater"];

/** Adds "the database holds entity `id`" to an atomic operation that stores it. */
export function holdId(op: DbAtomic, id: number): DbAtomic {
  return op.max(HELD_IDS_KEY, BigInt(id));
}

/**
 * The highest entity id the database holds (0 for none). A database written
 * before the mark was kept gets it once, from its accounts.
 */
export async function heldIdHighWater(kv: Db): Promise<number> {
  const wait = { waitWhileUnavailable: true };
  const mark = (await withKvRetry(() => kv.get<bigint>(HELD_IDS_KEY), wait)).value;
  if (typeof mark === "bigint") return Number(mark);
  let max = 0;
  for await (const e of kv.list<{ entityId?: unknown }>(["account"])) {
    const id = e.value?.entityId;
    if (typeof id === "number" && Number.isSafeInteger(id)) max = Math.max(max, id);
  }
  await withKvRetry(() => holdId(kv.atomic(), max).commit(), wait);
  return max;
}
