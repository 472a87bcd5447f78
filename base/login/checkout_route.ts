/**
 * Where a login's base is, by its account's checkout (checkout.ts): here (checked out to this baseapp now), or on
 * the live baseapp that holds it (its base, or the backup it restores it from), where the client is sent as a
 * resume is (resume_route.ts). A checkout held by a baseapp that the cellappmgr no longer lists as live (one that
 * died, or this one before it restarted), whose base no live baseapp holds, is taken over; one of a live baseapp
 * that does not hold the base is waited for a moment (it is being claimed or given back) before it is taken over.
 * A restored base claims its checkout from its dead baseapp, and gives way to a live holder that claimed it since.
 */
import type { Logger } from "../../core/log.ts";
import { type BaseAppInfo, sameAddress } from "../../core/wire/mod.ts";
import { type CheckoutHolder, type CheckoutRecord, type Checkouts, describeCheckout } from "../persist/mod.ts";
import { type AskBaseApp, findBaseHolder } from "./resume_route.ts";

/** How long a checkout of a live baseapp that does not hold its base is left to it (being claimed or given back). */
export const SETTLE_MS = 3_000;
/** How long a login waits for a restore here, or for this baseapp to hear the live baseapps. */
const WAIT_MS = 5_000;
/** Most reads of a checkout one login makes before it gives up. */
const MAX_ROUNDS = 30;

/** Where a login goes: here (checked out to this baseapp), to another baseapp's client URL, or refused. */
export type CheckoutDecision =
  | { kind: "here" }
  | { kind: "elsewhere"; url: string; reason: string }
  | { kind: "refused"; reason: string };

/** What deciding needs of the baseapp. */
export interface CheckoutRouteHost {
  readonly log: Logger;
  readonly checkouts: Pick<Checkouts, "read" | "claim" | "isSelf">;
  /** This baseapp's registration id (null before it has one). */
  selfId(): number | null;
  /** The live baseapps as the cellappmgr last listed them. */
  live(): readonly BaseAppInfo[];
  /** Resolves once the live list changed, or after `ms`. */
  liveChanged(ms: number): Promise<void>;
  /** Whether the base of `id` is here: a proxy, or one loading. */
  holdsBase(id: number): boolean;
  /** Whether a backup of `id` is held here (for a baseapp whose death is not yet announced). */
  holdsBackupOf(id: number): boolean;
  readonly whereIsBase: AskBaseApp;
}

function who(h: CheckoutHolder): string {
  return `baseapp ${h.baseapp} at ${h.address}`;
}

/** Whether `h` is one of the `live` baseapps (the same registration at the same address). */
function listed(live: readonly BaseAppInfo[], h: CheckoutHolder): boolean {
  return live.some((b) => b.id === h.baseapp && sameAddress(b.address, h.address));
}

/** How many bases the stale checkouts' release asks about at once. */
const ASK_BATCH = 16;

/**
 * Checks entity `id` out to this baseapp for a login (or a resume), unless its base is held elsewhere: then the
 * client goes there. Never two bases: of two baseapps deciding at once, one claim commits and the other reads it.
 */
export async function checkOutForLogin(host: CheckoutRouteHost, id: number): Promise<CheckoutDecision> {
  /** Until when a backup held here, whose baseapp is still listed live, is waited for to be restored. */
  let restoreBy: number | null = null;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (host.holdsBase(id)) return { kind: "here" };
    const listedSelf = () => {
      const self = host.selfId();
      return self !== null && host.live().some((b) => b.id === self);
    };
    if (!listedSelf()) {
      // Whose checkouts are stale is the cellappmgr's word: none is taken over before its list names this baseapp.
      await host.liveChanged(WAIT_MS);
      if (!listedSelf()) {
        return { kind: "refused", reason: "this baseapp is not yet listed by the cellappmgr; try again in a moment" };
      }
      continue;
    }
    const self = host.selfId();
    const seen = await host.checkouts.read(id);
    const r = seen.value;
    if (r?.holder && !host.checkouts.isSelf(r.holder)) {
      const live = host.live();
      const at = await findBaseHolder(id, live.filter((b) => b.id !== self), host.whereIsBase);
      if (at?.clientUrl) {
        return {
          kind: "elsewhere",
          url: at.clientUrl,
          reason: `${describeCheckout(id, r)} is held by baseapp ${at.id}: log in at ${at.clientUrl}`,
        };
      }
      if (host.holdsBase(id)) return { kind: "here" };
      restoreBy ??= Date.now() + WAIT_MS;
      if (host.holdsBackupOf(id) && Date.now() < restoreBy) {
        // Its baseapp is still listed live: restored here once its death is announced.
        await host.liveChanged(restoreBy - Date.now());
        continue;
      }
      const holderLive = listed(live, r.holder);
      if (holderLive && Date.now() - r.at < SETTLE_MS) {
        await new Promise((res) => setTimeout(res, 100));
        continue;
      }
      host.log.warn(
        `${describeCheckout(id, r)}: ${who(r.holder)} ` +
          (holderLive ? "is live but does not hold it" : "is not live (the cellappmgr's list)") +
          ", and no live baseapp holds it or a backup of it: checked out here instead",
        { entity: id },
      );
    }
    if ((await host.checkouts.claim(id, seen)) !== null) return { kind: "here" };
    host.log.info(`checkout of entity ${id} raced another claim; reading it again`, { entity: id });
  }
  return { kind: "refused", reason: `entity ${id} is being logged in elsewhere at the same time; try again` };
}

/**
 * Claims the checkout of entity `id`, restored here from its backup after baseapp `deadId` died: null when it is
 * this baseapp's now, else why not (a live baseapp claimed it since; the restored base gives way).
 */
export async function checkOutRestored(
  host: Pick<CheckoutRouteHost, "checkouts" | "live">,
  id: number,
  deadId: number,
): Promise<string | null> {
  for (let tries = 0; tries < 5; tries++) {
    const seen = await host.checkouts.read(id);
    const r: CheckoutRecord | null = seen.value;
    if (r?.holder && host.checkouts.isSelf(r.holder)) return null;
    if (r?.holder && r.holder.baseapp !== deadId && listed(host.live(), r.holder)) {
      return `${describeCheckout(id, r)} was checked out to live ${who(r.holder)} since its backup was made`;
    }
    if ((await host.checkouts.claim(id, seen)) !== null) return null;
  }
  return `the checkout of entity ${id} kept racing other claims`;
}

/**
 * Gives back the checkouts of baseapps that the cellappmgr's list (the one that named this baseapp) no longer has
 * live: this baseapp before it restarted, or one that died. Only those whose base no live baseapp holds, nor a backup
 * of it (which it restores, claiming the checkout), are given back; the others are left to their holders. Resolves
 * with how many were given back.
 */
export async function releaseStale(
  host: Pick<CheckoutRouteHost, "log" | "live" | "selfId" | "holdsBase" | "holdsBackupOf" | "whereIsBase"> & {
    readonly checkouts: Pick<Checkouts, "heldByNotLive" | "releaseStale">;
  },
): Promise<number> {
  const live = host.live();
  const self = host.selfId();
  const stale = await host.checkouts.heldByNotLive(new Set(live.map((b) => b.id)));
  const others = live.filter((b) => b.id !== self);
  let total = 0;
  for (const [baseapp, list] of stale) {
    let released = 0, left = 0;
    for (let i = 0; i < list.length; i += ASK_BATCH) {
      await Promise.all(
        list.slice(i, i + ASK_BATCH).map(async ({ id, seen }) => {
          if (host.holdsBase(id) || host.holdsBackupOf(id) || await findBaseHolder(id, others, host.whereIsBase)) {
            left++;
          } else if (await host.checkouts.releaseStale(seen)) released++;
        }),
      );
    }
    total += released;
    const at = list[0]?.seen.value?.holder?.address ?? "?";
    host.log.info(
      `checkouts of baseapp ${baseapp} at ${at}, which the cellappmgr does not list as live: ${released} given back, ` +
        `${left} left to the live baseapps holding their bases`,
    );
  }
  return total;
}
