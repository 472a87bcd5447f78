import type { Channel, RegisterInfo } from "../core/wire/mod.ts";
import { checkHeartbeatReport, reachableAddress, reachableUrl } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { ProcessView } from "../core/views.ts";

/** A registered cellapp or baseapp. */
export interface Member {
  id: number;
  role: "cellapp" | "baseapp";
  pid: number;
  address: string;
  clientUrl: string | null;
  startedAt: number;
  lastHeartbeatAt: number;
  load: number;
  /** Bytes the process reported sending to its peers so far. */
  peerBytesOut: number;
  channel: Channel;
}

/**
 * The cellappmgr's table of live processes. A member leaves it when its
 * channel closes, which the channel does itself on EOF or missed heartbeats.
 */
export class Registry {
  readonly members: Map<number, Member> = new Map();
  #byChannel = new Map<Channel, Member>();
  #nextId = 1;
  #log: Logger;
  /** Called after a member joined or left. */
  onChange:
    | ((m: Member, event: "joined" | "left", reason?: string) => void)
    | null = null;

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * Adds the process on `ch`. A process that re-registers after a cellappmgr
   * restart keeps its previous id when no one else holds it.
   */
  register(ch: Channel, info: RegisterInfo): Member {
    const known = this.#byChannel.get(ch);
    if (known) return known;
    let id = info.previousId ?? 0;
    if (!id || this.members.has(id)) id = this.#nextId;
    this.#nextId = Math.max(this.#nextId, id + 1);
    const m: Member = {
      id,
      role: info.role,
      pid: info.pid,
      address: reachableAddress(info.address, ch.remote),
      clientUrl: info.clientUrl === null ? null : reachableUrl(info.clientUrl, ch.remote),
      startedAt: info.startedAt,
      lastHeartbeatAt: performance.now(),
      load: 0,
      peerBytesOut: 0,
      channel: ch,
    };
    this.members.set(id, m);
    this.#byChannel.set(ch, m);
    ch.onHeartbeat = (payload) => {
      const bad = checkHeartbeatReport(payload);
      if (bad) return ch.drop(`bad heartbeat report from ${m.role} ${m.id}: ${bad}`);
      m.lastHeartbeatAt = performance.now();
      m.load = (payload as { load: number }).load;
    };
    ch.closed.then((reason) => this.#drop(m, reason));
    this.#log.info(
      `${m.role} ${id} joined: pid ${m.pid} at ${m.address}${info.previousId ? " (re-registered)" : ""}`,
    );
    this.onChange?.(m, "joined");
    return m;
  }

  /** The member registered on `ch`, if any. */
  memberOn(ch: Channel): Member | undefined {
    return this.#byChannel.get(ch);
  }

  /** Live members with `role`, in id order. */
  withRole(role: Member["role"]): Member[] {
    return [...this.members.values()].filter((m) => m.role === role).sort((
      a,
      b,
    ) => a.id - b.id);
  }

  /** The members as the admin API shows them. */
  views(now = performance.now(), wall = Date.now()): ProcessView[] {
    return [...this.members.values()].sort((a, b) => a.id - b.id).map((m) => ({
      id: m.id,
      role: m.role,
      pid: m.pid,
      address: m.address,
      ...(m.clientUrl ? { clientUrl: m.clientUrl } : {}),
      uptimeS: Math.max(0, Math.round((wall - m.startedAt) / 100) / 10),
      lastHeartbeatMsAgo: Math.round(now - m.lastHeartbeatAt),
      load: m.load,
      ...(m.role === "cellapp" ? { peerBytesOut: m.peerBytesOut } : {}),
    }));
  }

  #drop(m: Member, reason: string): void {
    if (this.members.get(m.id) !== m) return;
    this.members.delete(m.id);
    this.#byChannel.delete(m.channel);
    this.#log.warn(`${m.role} ${m.id} (pid ${m.pid}) left: ${reason}`);
    this.onChange?.(m, "left", reason);
  }
}
