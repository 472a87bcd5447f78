/**
 * Where a resume goes: a client whose baseapp died may try any live
 * baseapp, but its base was restored on one of them only (the holder of its
 * backup). A baseapp that holds neither the player nor a backup of it asks the
 * other live baseapps, and sends the client to the one that does, before its
 * single-use token is used up.
 */
import type { BaseAppInfo, BaseHeldHere } from "../../core/wire/mod.ts";

/** How long each baseapp has to answer. */
export const ASK_TIMEOUT_MS = 2000;

/** Asks the baseapp at `address` how it holds the base of `entityId`; rejects when it cannot answer. */
export type AskBaseApp = (address: string, entityId: number) => Promise<BaseHeldHere>;

/**
 * The live baseapp of `others` that holds the base of `entityId`, with a client URL to resume on: one with its proxy
 * before one with a backup (which restores it when its baseapp's death is announced); null when none does. Baseapps
 * that do not answer in time (a dead one still listed) are passed over.
 */
export async function findBaseHolder(
  entityId: number,
  others: readonly BaseAppInfo[],
  ask: AskBaseApp,
  timeoutMs: number = ASK_TIMEOUT_MS,
): Promise<BaseAppInfo | null> {
  const answers = await Promise.all(
    others.filter((b) => b.clientUrl !== null).map(async (b) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const held = await Promise.race([
          ask(b.address, entityId),
          new Promise<null>((r) => timer = setTimeout(() => r(null), timeoutMs)),
        ]);
        return { b, held };
      } catch {
        return { b, held: null };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return answers.find((a) => a.held === "proxy")?.b ?? answers.find((a) => a.held === "backup")?.b ?? null;
}
