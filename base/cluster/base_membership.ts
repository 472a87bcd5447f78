/**
 * A baseapp's membership of the cluster, as the cellappmgr keeps it: what registering does (ids, the global store,
 * the authority confirmed), what being fenced drops (every base, every client), the requests and writes of its
 * bases that wait until the cellappmgr confirms it after a stall or a lapse of its lease, and following the list of
 * live baseapps (base backups, where clients may resume).
 */
import { errorText } from "../../core/errors.ts";
import type { Logger } from "../../core/log.ts";
import type { EntityIdPool } from "../../core/id_pool.ts";
import { CloseCode, S2C } from "../../core/proto/mod.ts";
import { backupTarget, type BaseAppInfo, BaseBackupMsg, type MgrLink, RestoreMsg } from "../../core/wire/mod.ts";
import type { BaseAuthority } from "./base_fence.ts";
import { history } from "../../core/history.ts";
import type { BaseGlobals, ClientSession, ProxyHost } from "../entity/mod.ts";
import type { BaseBackups } from "../backup/mod.ts";
import type { Autosave, Checkouts, EntityStore, Savable } from "../persist/mod.ts";
import { type PeerSource, requestCellEntity } from "../cell_link/mod.ts";

/** What the cellappmgr's word on this baseapp touches. */
export interface MemberHost {
  readonly log: Logger;
  readonly link: Pick<MgrLink, "onRegistered" | "onFenced">;
  readonly authority: Pick<BaseAuthority, "registered" | "fenced">;
  readonly ids: Pick<EntityIdPool, "ensure">;
  readonly globals: Pick<BaseGlobals, "sync">;
  /** The bases held, by entity id: fenced, they are dropped. */
  readonly proxies: Map<number, Savable & { fence(): void }>;
  readonly autosave: Pick<Autosave, "remove">;
  readonly backups: Pick<BaseBackups, "reset">;
  /** The checkouts held: fenced, they were claimed by the baseapps that restored its bases. */
  readonly checkouts: Pick<Checkouts, "forgetAll">;
  readonly sessions: ReadonlySet<Pick<ClientSession, "close">>;
}

/** Sets what this baseapp does when the cellappmgr registers it, and when it says it was fenced. */
export function followMgr(host: MemberHost): void {
  const { link, log } = host;
  // A reserve of ids, so that first logins go on while the cellappmgr is away.
  link.onRegistered = () => {
    host.authority.registered();
    host.ids.ensure().catch((e) => log.warn(`could not get entity ids: ${errorText(e)}`));
    host.globals.sync().catch((e) => log.warn(`could not sync the global store: ${errorText(e)}`));
  };
  link.onFenced = (why) => fenced(host, why);
}

/**
 * The cellappmgr says this baseapp was declared dead while it stalled or was cut off: its bases were restored on
 * other baseapps from their backups. Every base is dropped without a write or a word to its cell, and every client is
 * closed with CloseCode.baseAppFenced, which makes the SDK resume where its base is now; it registers again, empty,
 * next.
 */
function fenced(host: MemberHost, why: string): void {
  host.authority.fenced(why);
  const bases = host.proxies.size;
  for (const p of host.proxies.values()) {
    p.fence();
    host.autosave.remove(p);
  }
  host.proxies.clear();
  history.dropAll("fenced");
  host.backups.reset();
  host.checkouts.forgetAll();
  const clients = host.sessions.size;
  for (const s of [...host.sessions]) {
    s.close("this baseapp was declared dead (fenced); resume on another", CloseCode.baseAppFenced);
  }
  host.log.error(
    `fenced: ${why}. Dropped ${bases} base(s) without writing them (other baseapps restored them) and closed ` +
      `${clients} client connection(s) to resume there; registering again as a new, empty baseapp`,
  );
}

/**
 * The cellappmgr requests and the writes of this baseapp's bases. Each waits until this baseapp may act: nothing is
 * asked or written after a stall or while its lease is lapsed until the cellappmgr confirms it, as it may have been
 * fenced meanwhile.
 */
export function confirmedRequests(
  link: MgrLink,
  authority: Pick<BaseAuthority, "confirmed">,
  store: Pick<EntityStore, "save">,
  log: Logger,
): Pick<ProxyHost, "createCellEntity" | "save" | "restoreCellEntity"> {
  return {
    createCellEntity: async (spec, signal, place) => {
      await authority.confirmed();
      return await requestCellEntity(link, spec, signal, log, place);
    },
    // The store waits for the same confirmation before each commit (EntityStore.gate), grouped or alone.
    save: (id, e) => store.save(id, e),
    restoreCellEntity: async (backup) => {
      await authority.confirmed();
      const ch = link.channel;
      if (!ch) throw new Error("the cellappmgr is not reachable");
      return await ch.request(RestoreMsg.restoreCellEntity, backup, link.address, true);
    },
  };
}

/** The live baseapps as the cellappmgr lists them: whom bases are backed up to, and where clients may resume. */
export class LiveBaseApps {
  /** Told each new list, after the backups and the clients. */
  onChanged: ((list: BaseAppInfo[]) => void) | null = null;

  constructor(
    private readonly backups: Pick<BaseBackups, "setLive" | "clientUrls" | "forget" | "live">,
    private readonly sessions: Iterable<Pick<ClientSession, "state" | "sendMessage">>,
    private readonly link: Pick<MgrLink, "id">,
    private readonly peers: Pick<PeerSource, "get">,
    private readonly log: Logger,
  ) {}

  /** The live baseapps changed: backups follow the new list, and clients learn where they may resume. */
  changed(list: BaseAppInfo[]): void {
    this.backups.setLive(list);
    const urls = this.backups.clientUrls();
    for (const s of this.sessions) if (s.state === "online") s.sendMessage({ id: S2C.baseApps, urls });
    this.onChanged?.(list);
  }

  /** Base `id` logged out: its backup baseapp drops its backup, so that it is not restored if this one dies. */
  dropBackup(id: number): void {
    this.backups.forget(id);
    const target = backupTarget(id, this.backups.live, this.link.id);
    if (!target) return;
    this.peers.get(target.address).then(
      (ch) => ch.send(BaseBackupMsg.dropBaseBackup, id),
      (e) => this.log.warn(`could not drop the backup of entity ${id} at ${target.address}: ${errorText(e)}`),
    );
  }
}
