/**
 * Base backups (docs/faults.md, "Backups"): every backup period each base's state
 * goes to another baseapp, chosen by a hash of its id over the live baseapps
 * (a tenth of the bases every tenth of the period, so the traffic is spread);
 * this baseapp keeps the latest backup of each base others send it, and when
 * one of them dies hands its backups over to be restored. A restored base
 * accepts one resume token only: the last one its old baseapp gave, once
 * (any one of its own if it was backed up before it had one).
 */
import { errorText } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import { Throttle } from "../../core/log.ts";
import { backupTarget, type BaseAppInfo, type BaseBackup, sameAddress } from "../../core/wire/mod.ts";

/** Default milliseconds between two backups of a base. */
export const BACKUP_PERIOD_MS = 1000;
/** Sends per period: each send covers the bases whose id falls in its slot. */
const SLOTS = 10;

/** A base that can be backed up (a proxy). */
export interface BackedUp {
  readonly id: number;
  /** Its state now, or null when it is not to be backed up (logging out). */
  backupState(): BaseBackup | null;
}

/** What base backups need of their baseapp. */
export interface BaseBackupHost {
  readonly log: Logger;
  /** This baseapp's registration id (null before it has one). */
  selfId(): number | null;
  /** The bases to back up. */
  bases(): Iterable<BackedUp>;
  /** Sends `backup` to the baseapp at `address`; rejects when it cannot. */
  send(address: string, backup: BaseBackup): Promise<void>;
}

/** Counters, for tests and logs. */
export interface BaseBackupStats {
  sent: number;
  kept: number;
}

/** The base backups one baseapp sends and holds. */
export class BaseBackups {
  /** The live baseapps, as the cellappmgr last listed them. */
  live: BaseAppInfo[] = [];
  readonly stats: BaseBackupStats = { sent: 0, kept: 0 };
  /** Backups held for other baseapps: by the sender's address, then entity id. */
  readonly #held = new Map<string, Map<number, BaseBackup>>();
  /** Restored bases awaiting their client: the nonce of the one resume token each accepts. */
  readonly #awaiting = new Map<number, string | null>();
  /** Settled whenever the live list changes: resumes of a base whose baseapp may be dying wait on it. */
  #changed = Promise.withResolvers<void>();
  readonly #failed = new Throttle(60_000);
  readonly #timer: ReturnType<typeof setInterval>;
  #slot = 0;

  constructor(private readonly host: BaseBackupHost, periodMs: number = BACKUP_PERIOD_MS) {
    this.#timer = setInterval(() => this.#sendSlot(), periodMs / SLOTS);
  }

  /** The cellappmgr's new list of live baseapps: backups held for a base now backed up elsewhere are dropped. */
  setLive(list: BaseAppInfo[]): void {
    this.live = list;
    const self = this.host.selfId();
    for (const [from, held] of this.#held) {
      const owner = list.find((b) => sameAddress(b.address, from));
      if (!owner) continue; // Dead: its death notice takes its backups.
      for (const id of held.keys()) if (backupTarget(id, list, owner.id)?.id !== self) held.delete(id);
    }
    this.#changed.resolve();
    this.#changed = Promise.withResolvers<void>();
  }

  /** Resolves once the live list changes, or after `ms`. */
  async liveChanged(ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.#changed.promise, new Promise((r) => timer = setTimeout(r, ms))]);
    clearTimeout(timer);
  }

  /** The client URLs of the live baseapps. */
  clientUrls(): string[] {
    return this.live.flatMap((b) => b.clientUrl === null ? [] : [b.clientUrl]);
  }

  /** Keeps `backup` from the baseapp at `from` (the latest replaces the one before). */
  keep(from: string, backup: BaseBackup): void {
    let held = this.#held.get(from);
    if (!held) this.#held.set(from, held = new Map());
    const first = !held.has(backup.entityId);
    held.set(backup.entityId, backup);
    this.stats.kept++;
    if (first) {
      this.host.log.info(
        `base backups held: ${this.heldCount} (first of ${backup.type} ${backup.entityId} from the baseapp at ${from})`,
      );
    }
  }

  /** The base `id` of the baseapp at `from` logged out: its backup must not be restored. */
  drop(from: string, id: number): void {
    this.#held.get(from)?.delete(id);
  }

  /** Whether a backup of base `id` is held here (for any baseapp). */
  holdsBackupOf(id: number): boolean {
    for (const held of this.#held.values()) if (held.has(id)) return true;
    return false;
  }

  /** How many backups are held now. */
  get heldCount(): number {
    let n = 0;
    for (const held of this.#held.values()) n += held.size;
    return n;
  }

  /**
   * The baseapp at `address` died: the backups held for it, to restore (they are no longer held). It is out of the
   * live list at once, before the cellappmgr's new list comes: no backup goes there meanwhile.
   */
  takeOf(address: string): BaseBackup[] {
    this.live = this.live.filter((b) => !sameAddress(b.address, address));
    const out: BaseBackup[] = [];
    for (const [from, held] of this.#held) {
      if (!sameAddress(from, address)) continue;
      out.push(...held.values());
      this.#held.delete(from);
    }
    return out;
  }

  /** Base `id` was restored from its backup: it accepts the resume token with `nonce` (null: none), once. */
  awaitResume(id: number, nonce: string | null): void {
    this.#awaiting.set(id, nonce);
  }

  /** This baseapp was fenced: its restored bases are dropped, and it knows no live baseapp until it registers again. */
  reset(): void {
    this.live = [];
    this.#awaiting.clear();
  }

  /** Base `id` is gone or has its client again: no token is awaited for it any more. */
  forget(id: number): void {
    this.#awaiting.delete(id);
  }

  /**
   * Whether a resume token of entity `id` with `nonce` is accepted here, before it is used up: null if so, else why
   * not. A base restored here accepts only the last token its old baseapp gave (once); while a backup of it is held
   * for a baseapp still listed live (its death not yet announced), this waits up to `waitMs` for the list to change.
   */
  async checkResume(id: number, nonce: string, waitMs: number): Promise<string | null> {
    const deadline = Date.now() + waitMs;
    let owner = this.#liveOwnerOf(id);
    while (owner !== null && Date.now() < deadline) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([this.#changed.promise, new Promise((r) => timer = setTimeout(r, deadline - Date.now()))]);
      clearTimeout(timer);
      owner = this.#liveOwnerOf(id);
    }
    if (owner !== null) return `entity ${id} is on the live baseapp at ${owner}: resume there`;
    if (!this.#awaiting.has(id)) return null;
    const want = this.#awaiting.get(id);
    // Backed up before its first token: any token of it is the one (the signature and the used-nonce record hold).
    if (want !== null && want !== nonce) {
      return `entity ${id} was restored here and awaits its latest resume token; log in again`;
    }
    this.#awaiting.delete(id);
    return null;
  }

  #liveOwnerOf(id: number): string | null {
    for (const [from, held] of this.#held) {
      if (held.has(id) && this.live.some((b) => sameAddress(b.address, from))) return from;
    }
    return null;
  }

  /** Sends the backups of the bases of the current slot. */
  #sendSlot(): void {
    const slot = this.#slot;
    this.#slot = (slot + 1) % SLOTS;
    const self = this.host.selfId();
    if (self === null || this.live.length < 2) return;
    for (const base of this.host.bases()) {
      if (base.id % SLOTS !== slot) continue;
      const target = backupTarget(base.id, this.live, self);
      const state = target ? base.backupState() : null;
      if (!target || !state) continue;
      this.stats.sent++;
      this.host.send(target.address, state).catch((e) => {
        const held = this.#failed.take(target.id);
        if (held === null) return;
        this.host.log.warn(
          `base backups to baseapp ${target.id} at ${target.address} fail: ${errorText(e)}` +
            Throttle.note(held),
        );
      });
    }
  }

  /** Stops sending. */
  close(): void {
    clearInterval(this.#timer);
  }
}
