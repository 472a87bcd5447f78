/**
 * Restoring a base from its backup when its baseapp died: a proxy
 * awaiting its client's resume, made the base of its cell entity by the
 * cellapp holding the real, or asking for it again when that cellapp no
 * longer holds it (it moved since the backup; the cell covering its place
 * adopts the orphan).
 */
import { errorText } from "../../core/errors.ts";
import { decodeCellBackup, decodePersistentState, type EntityRegistry, PropertyContainer } from "../../core/def/mod.ts";
import type { Logger } from "../../core/log.ts";
import type { Placement } from "../../core/placement.ts";
import { type BaseBackup, decodeBackup, type Rebased } from "../../core/wire/mod.ts";
import type { MakeProxy, Proxy } from "../entity/mod.ts";

/** What restoring a base needs of its baseapp. */
export interface BaseRestoreHost {
  readonly log: Logger;
  readonly registry: EntityRegistry;
  /** Whether entity `id` is here already (a proxy, or one loading: a login or a resume from KV came first). */
  has(id: number): boolean;
  /** A new proxy of this baseapp (not yet held). */
  readonly newProxy: MakeProxy;
  /** Holds `proxy` (autosaved) awaiting its client, which may resume with the token of nonce `nonce` only. */
  hold(proxy: Proxy, nonce: string | null): void;
  /** Whether `proxy` is still the one held for its entity (it did not log out meanwhile). */
  holds(proxy: Proxy): boolean;
  /**
   * Checks entity `id` out to this baseapp from the dead baseapp `deadId`: null when done, else why not (a live
   * baseapp claimed it since the backup was made).
   */
  checkOut(id: number, deadId: number): Promise<string | null>;
  /** Drops a restored base that gives way to the live holder of its checkout: no write, no word to its cell. */
  drop(proxy: Proxy, why: string): void;
  /** Tells the cellapp at `cellapp` that entity `id`'s base is here: where the real is, or null if not there. */
  rebase(cellapp: string, id: number): Promise<Rebased | null>;
  /** Where a player goes whose space is gone. */
  spawn(): Placement;
}

/** Restores the base of `b`, backed up by the dead baseapp `deadId`; rejects naming the entity when it cannot. */
export async function restoreBase(host: BaseRestoreHost, b: BaseBackup, deadId: number): Promise<void> {
  const id = b.entityId;
  if (host.has(id)) return;
  const type = host.registry.get(b.type);
  if (!type.hasBase) throw new Error(`entity ${id} is a ${type.name}, which has no base`);
  const cell = b.cell ? decodeBackup(b.cell, id) : null;
  const cellProps = cell
    ? decodeCellBackup(type, cell.entity.props, id)
    : new PropertyContainer(type, "cell", { entityId: id });
  const proxy = host.newProxy(id, type, b.account, cellProps, b.position, b.direction);
  const skipped = decodePersistentState(b.base, proxy.base);
  if (skipped.length) host.log.warn(`entity ${id}: backed-up properties no longer persistent: ${skipped.join(", ")}`);
  proxy.spaceId = b.spaceId;
  proxy.tokenNonce = b.tokenNonce;
  host.hold(proxy, b.tokenNonce);
  proxy.awaitClient();
  let lost: string | null;
  try {
    lost = await host.checkOut(id, deadId);
  } catch (e) {
    lost = `its checkout could not be claimed: ${errorText(e)}`;
  }
  if (lost !== null) {
    if (host.holds(proxy)) host.drop(proxy, lost);
    host.log.warn(`${type.name} ${id} not restored from its backup (baseapp ${deadId} died): ${lost}`, { entity: id });
    return;
  }
  if (!host.holds(proxy)) return;
  let note = "no cell entity";
  if (b.cellapp !== null) {
    let at = null;
    try {
      at = await host.rebase(b.cellapp, id);
    } catch (e) {
      host.log.warn(
        `${type.name} ${id}: the cellapp at ${b.cellapp} was not told its new base: ${errorText(e)}`,
      );
    }
    if (at && host.holds(proxy)) {
      proxy.rebased(b.cellapp, at.spaceId, at.position, at.direction, cell);
      note = `its cell entity on ${b.cellapp}`;
    }
  }
  if (proxy.cellState === "none" && b.spaceId !== 0 && host.holds(proxy)) {
    // Its real moved since (or its cellapp is gone): asked for again, the cell covering its place adopts it.
    void proxy.createCell(b.spaceId, host.spawn());
    note = `its cell entity asked for in space ${b.spaceId}`;
  }
  const awaiting = type.proxy ? "; awaiting its client" : "";
  host.log.info(`${type.name} ${id} restored from its backup (baseapp ${deadId} died), ${note}${awaiting}`, {
    entity: id,
  });
}
