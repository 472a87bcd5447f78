import type { Channel, RegisterInfo } from "../core/wire/mod.ts";
import { checkHeartbeatReport, ProcMsg, reachableAddress, reachableUrl } from "../core/wire/mod.ts";
import type { Logger } from "../core/log.ts";
import type { GameVersionView, ProcessView } from "../core/views.ts";

/** Dead cellapp generations kept by name, the latest first given to every member that registers. */
export const DEAD_KEPT = 1024;

/** A registered cellapp or baseapp. */
export interface Member {
  id: number;
  role: "cellapp" | "baseapp";
  pid: number;
  address: string;
  clientUrl: string | null;
  startedAt: number;
  lastHeartbeatAt: number;
  /** Heartbeats it sent so far: a member that sent none was never seen working. */
  heartbeats: number;
  load: number;
  /** Bytes the process reported sending to its peers so far. */
  peerBytesOut: number;
  /** A cellapp's ghost radius (m), as it last reported it; 0 until then. */
  ghostRadius: number;
  /** This registration's generation: unique, growing, and dead for good once the member leaves. */
  generation: number;
  /** The game it runs, as it reported at registration and after each reload. */
  game: GameVersionView | null;
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
  /**
   * The first generation this run gives; those below were given by an earlier
   * run (whose members rejoin). Starting from the clock keeps generations
   * growing across restarts without a database.
   */
  readonly firstGeneration: number = Date.now();
  #nextGeneration = this.firstGeneration;
  /**
   * Why each cellapp generation of this run was declared dead, the latest DEAD_KEPT of them: every registration reply
   * lists them. One that fell out is still fenced if it comes back (no member holds it: fencedWhy).
   */
  #dead = new Map<number, string>();
  /**
   * Why each baseapp generation of this run was declared dead while another baseapp lived to restore its bases. Kept
   * apart: no member acts on them, so they are neither broadcast nor listed in registration replies.
   */
  #deadBases = new Map<number, string>();
  /** Generations that left while the rejoin window was open (held, not declared dead): they may come back. */
  #pardoned = new Set<number>();
  #log: Logger;
  /**
   * Whether a member that leaves now is held rather than declared dead (the rejoin window is open): nothing it held
   * is given away yet, no one is told it was fenced, and it may register again unfenced. Asked before the others
   * are told.
   */
  isHeld: ((m: Member, reason: string) => boolean) | null = null;
  /** Whether members are expected to leave now (a cluster shutdown): their leaving is then logged as news, not a fault. */
  leavingExpected: (() => boolean) | null = null;
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
      heartbeats: 0,
      load: 0,
      peerBytesOut: 0,
      ghostRadius: 0,
      generation: this.#nextGeneration++,
      game: info.game ?? null,
      channel: ch,
    };
    this.members.set(id, m);
    this.#byChannel.set(ch, m);
    ch.onHeartbeat = (payload) => {
      const bad = checkHeartbeatReport(payload);
      if (bad) return ch.drop(`bad heartbeat report from ${m.role} ${m.id}: ${bad}`);
      m.lastHeartbeatAt = performance.now();
      m.heartbeats++;
      m.load = (payload as { load: number }).load;
    };
    ch.closed.then((reason) => this.#drop(m, reason));
    this.#log.info(
      `${m.role} ${id} joined: pid ${m.pid} at ${m.address}${info.previousId ? " (re-registered)" : ""}`,
    );
    this.onChange?.(m, "joined");
    return m;
  }

  /**
   * Why a cellapp or baseapp registering on `ch` with `info` is fenced, or
   * null when it is not: it names a generation of this run that was declared
   * dead (its cells were given away, or its bases restored on other baseapps),
   * or one still registered on another connection (a process has one link:
   * that one is closed, and what it held goes).
   */
  fencedWhy(ch: Channel, info: RegisterInfo): string | null {
    const g = info.generation;
    if (!g || g < this.firstGeneration || this.#byChannel.has(ch)) return null;
    const cellapp = info.role === "cellapp";
    const held = cellapp ? "its cells given to others" : "its bases restored on other baseapps";
    if (this.#pardoned.has(g)) return null;
    const dead = (cellapp ? this.#dead : this.#deadBases).get(g);
    if (dead !== undefined) return `its generation ${g} was declared dead (${dead}) and ${held}`;
    const current = [...this.members.values()].find((m) => m.generation === g);
    // A lone baseapp that left is not fenced: no other baseapp held backups of its bases, so they are still its own.
    if (!current) return cellapp ? `its generation ${g} is not one this cellappmgr knows` : null;
    current.channel.close(`${current.role} ${current.id} registered again on another connection`);
    return `its generation ${g} was still registered on another connection, now closed: ${held}`;
  }

  /**
   * Declares dead, after all, a member that was held (`isHeld`) and did not come back: if it does, it is fenced, and
   * the others drop what it still sends.
   */
  condemn(m: Member, reason: string): void {
    this.#pardoned.delete(m.generation);
    this.#fence(m, reason);
  }

  /** The cellapp generations of this run declared dead so far. */
  deadGenerations(): number[] {
    return [...this.#dead.keys()];
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
      generation: m.generation,
      ...(m.role === "cellapp" ? { peerBytesOut: m.peerBytesOut } : {}),
      ...(m.game ? { game: m.game } : {}),
    }));
  }

  #drop(m: Member, reason: string): void {
    if (this.members.get(m.id) !== m) return;
    this.members.delete(m.id);
    this.#byChannel.delete(m.channel);
    const left = `${m.role} ${m.id} (pid ${m.pid}) left: ${reason}`;
    if (this.leavingExpected?.()) this.#log.info(left);
    else this.#log.warn(left);
    if (this.isHeld?.(m, reason)) this.#pardoned.add(m.generation);
    else this.#fence(m, reason);
    this.onChange?.(m, "left", reason);
  }

  /** Fenced: if `m` comes back it is told so, and what it still sends meanwhile is dropped. */
  #fence(m: Member, reason: string): void {
    if (m.role === "cellapp") {
      this.#dead.set(m.generation, reason);
      if (this.#dead.size > DEAD_KEPT) this.#dead.delete(this.#dead.keys().next().value!);
      for (const o of this.members.values()) o.channel.send(ProcMsg.fenced, m.id, m.generation, m.address);
    } else if (this.withRole("baseapp").length > 0) this.#deadBases.set(m.generation, reason);
  }
}
