/**
 * What the cellappmgr does as members join and leave: a dead cellapp's cells
 * go to the others and its entities come back from their backups, a dead
 * baseapp is announced, a cellapp that leaves while the rejoin window is
 * open is waited for, and the admin watch socket hears of every change.
 */
import { errorText } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";
import type { ProcessChange } from "../core/views.ts";
import type { Member, Registry } from "./registry.ts";
import type { Spaces } from "./spaces.ts";
import type { Buddies } from "./buddies.ts";
import type { Balancer } from "./balance/mod.ts";
import type { DefaultSpace } from "./default_space.ts";
import { announceDeath } from "./restore.ts";
import { announceBaseAppDeath, announceBaseApps } from "./base_members.ts";
import { dropMissingCellApps } from "./rejoin.ts";
import { Losses, unbackedOf } from "./losses.ts";

/** What handling members' comings and goings needs of the cellappmgr. */
export interface MembershipHost {
  readonly registry: Registry;
  readonly spaces: Spaces;
  readonly buddies: Buddies;
  readonly balancer: Pick<Balancer, "forget" | "start">;
  readonly defaultSpace: Pick<DefaultSpace, "ensure" | "lostWithBackups">;
  readonly log: Logger;
  /** Whether the rejoin window (rejoin.ts) is still open. */
  rejoinOpen(): boolean;
  /** Whether a cluster shutdown is under way: members leaving then are not failures. */
  shuttingDown(): boolean;
  /** Stores the cellapps being drained (balance/drains.ts). */
  saveDrains(): void;
  /** The next entity id that would be handed out (for the log). */
  nextEntityId(): number;
}

/** Reacts to the registry's joins and leaves (Registry.onChange) and to the end of the rejoin window. */
export class Membership {
  /**
   * Members that left while the rejoin window was open (with a cellapp's buddy), by id: held, not declared dead
   * (Registry.isHeld), and declared dead at its end if not back.
   */
  #leftInRejoin = new Map<number, { member: Member; buddy: number | null; reason: string }>();
  /** Who hears of processes joining and leaving (the admin watch socket). */
  #processListeners = new Set<(change: ProcessChange) => void>();
  /** What dead cellapps' buddies were to restore, and the log of what nobody could (losses.ts). */
  readonly #losses: Losses;

  constructor(private readonly host: MembershipHost) {
    this.#losses = new Losses(host.log);
  }

  /** A member joined or left (Registry.onChange). */
  changed(m: Member, event: "joined" | "left", reason?: string): void {
    const { registry, spaces, buddies, log } = this.host;
    this.#tellProcessChange(m, event, reason);
    if (this.host.shuttingDown()) return;
    if (event === "left" && this.host.rejoinOpen()) {
      // Nothing it held has been given away yet, and a member of the previous run (or one that lost this cellappmgr
      // while it stalled or was cut off) may lose its connection while it finds its way back: what it holds waits
      // for it until the window closes, and it may register again unfenced.
      this.#leftInRejoin.set(m.id, { member: m, buddy: buddies.buddyOf(m.id), reason: reason ?? "left" });
      log.warn(
        `${m.role} ${m.id} left during the rejoin window: its ${m.role === "cellapp" ? "cells" : "bases"} wait ` +
          `for it until the window closes`,
      );
      return;
    }
    if (event === "joined") this.#leftInRejoin.delete(m.id);
    if (m.role === "baseapp") return this.#baseAppsChanged(m, event);
    if (event === "left") {
      if (spaces.draining.has(m.id)) {
        this.host.balancer.forget(m.id);
        this.host.saveDrains();
      }
      const buddy = buddies.buddyOf(m.id);
      this.#losses.cellAppDied(
        m.id,
        buddy === null ? null : {
          id: buddy,
          alive: registry.members.get(buddy)?.role === "cellapp",
          toldMsAgo: buddies.toldMsAgo(m.id),
          previous: buddies.previousOf(m.id),
        },
        unbackedOf(spaces.reportsOf(m.id)),
      );
      const lost = spaces.onCellAppLeft(m.id);
      if (buddy !== null && lost.some((s) => s.isDefault)) this.host.defaultSpace.lostWithBackups();
      announceDeath(registry, m, buddy, log);
    }
    // After the current message: a new cellapp must get its registration reply before createCell.
    setTimeout(() => {
      buddies.update();
      void this.host.defaultSpace.ensure();
      if (!this.host.rejoinOpen() && !this.host.shuttingDown()) void spaces.giveCellsToBareSpaces();
    }, 0);
  }

  /** The rejoin window is over: what the members reported is all there is; the default space is made if missing. */
  rejoined(): void {
    const { registry, spaces, log } = this.host;
    const missing = dropMissingCellApps(spaces, registry);
    // Those that left during the window and did not come back are dead after all: their entities come back from
    // their backups, their bases from their backup baseapps.
    for (const [id, left] of this.#leftInRejoin) {
      if (registry.members.has(id)) continue;
      registry.condemn(left.member, `${left.reason}, and not back when the rejoin window closed`);
      if (left.member.role === "baseapp") this.#baseAppsChanged(left.member, "left");
      else if (missing.includes(id)) announceDeath(registry, left.member, left.buddy, log);
    }
    this.#leftInRejoin.clear();
    const adopted = [...spaces.all.keys()].sort((a, b) => a - b);
    log.info(
      `rejoin window over: ${registry.withRole("cellapp").length} cellapp(s) and ` +
        `${registry.withRole("baseapp").length} baseapp(s) back, ` +
        `${adopted.length ? `space(s) ${adopted.join(", ")} adopted` : "no space to adopt"}` +
        `${missing.length ? `, cellapp(s) ${missing.join(", ")} missing` : ""}; ` +
        `entity ids go on from ${this.host.nextEntityId()}`,
    );
    void this.host.defaultSpace.ensure();
    void spaces.giveCellsToBareSpaces();
    // A drain stored for a cellapp that did not come back ends: a new cellapp may be given its id.
    const stale = [...spaces.draining].filter((id) => !registry.members.has(id));
    for (const id of stale) spaces.draining.delete(id);
    if (stale.length > 0) this.host.saveDrains();
    // Partitions move only once the spaces are what the members say they are.
    this.host.balancer.start();
  }

  /** How many members that were seen working (sent a heartbeat) left while the rejoin window was open and are not back. */
  get awaited(): number {
    let n = 0;
    for (const [id, left] of this.#leftInRejoin) {
      if (left.member.heartbeats > 0 && !this.host.registry.members.has(id)) n++;
    }
    return n;
  }

  /** Calls `listener` after every process joins or leaves; returns what stops it. */
  onProcessChange(listener: (change: ProcessChange) => void): () => void {
    this.#processListeners.add(listener);
    return () => this.#processListeners.delete(listener);
  }

  /** A baseapp joined or left: the baseapps hear the new list (after a new one's registration reply), all of a death. */
  #baseAppsChanged(m: Member, event: "joined" | "left"): void {
    if (event === "left") announceBaseAppDeath(this.host.registry, m, this.host.log);
    setTimeout(() => announceBaseApps(this.host.registry, this.host.log), 0);
  }

  #tellProcessChange(m: Member, event: "joined" | "left", reason?: string): void {
    const change: ProcessChange = {
      event,
      process: { id: m.id, role: m.role, pid: m.pid, address: m.address },
      ...(reason === undefined ? {} : { reason }),
    };
    for (const listener of this.#processListeners) {
      try {
        listener(change);
      } catch (e) {
        this.host.log.error(`a process change listener failed: ${errorText(e)}`);
      }
    }
  }
}
